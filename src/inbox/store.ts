/**
 * The storage contract of the inbox. Both shipped stores (SQLite, Postgres) implement it and pass
 * the shared conformance suite (`inboxStoreConformance`); a user's own store (MySQL, SQL Server)
 * implements the same methods and runs the same suite. Times are epoch milliseconds from the
 * inbox's clock, passed in so that stores never read the wall clock themselves.
 */
import { pairKeyOf } from './copies.ts';
import { scrubPatterns } from './error-text.ts';

/** Where an entry is in its life. */
export type InboxEntryStatus = 'pending' | 'processing' | 'done' | 'dead';

/** A verified delivery, as the receiver hands it to the store. */
export interface NewInboxEntry {
  /**
   * The tenant (merchant) it was received for, with `createInbox({ tenants })`; absent or `''` for a
   * single-merchant inbox. Delivery ids, orders, leases and per-order order are per tenant.
   */
  tenant?: string;
  /** `X-Service-Delivery-Id`: with the tenant, the key; a second insert of the same id for the same tenant changes nothing. */
  deliveryId: string;
  event: string;
  /** `data.order_id` of order events, else `null`. Events of one order are handled one at a time. */
  orderId: string | null;
  /** The event's `ts` in epoch seconds: the order of events within one order. */
  ts: number;
  /** The raw body as received (UTF-8 JSON). Holds personal data: never logged. */
  payload: string;
  /** Whether this SDK version knows the event name. */
  known: boolean;
  receivedAt: number;
  /**
   * Where an authentic body differs from the SDK's schema, as paths (never values); `null` or
   * absent when it matches. Stored and listed as the entry's mark.
   */
  schemaIssues?: readonly string[] | null;
  /** `dead` stores it finished at `receivedAt`, with `lastError` as the reason. @default 'pending' */
  status?: 'pending' | 'dead';
  lastError?: string | null;
  /** `'reconcile'` for an entry `inbox.reconcile` made up from an order read back; absent for a real delivery. */
  source?: 'reconcile';
  /**
   * For a reconcile `order.status_changed`: the order's {@link InboxOrderState.version} in the state
   * it was made from. The entry is stored covered when the order left its status since.
   */
  orderVersion?: number;
  /**
   * The order status an order event carries (`data.status`); when left out the store reads it from
   * the payload ({@link orderStatusOf}).
   */
  orderStatus?: string | null;
  /**
   * The order's `display_number` and `external_order_id`, kept in columns of their own so that an
   * order stays findable after retention clears its payload. Left out, the store reads them from
   * the payload.
   */
  displayNumber?: string | null;
  externalOrderId?: string | null;
  /**
   * An opaque, non-secret id of the secret that verified it (a tenant's endpoint id, or a hash
   * prefix of a single-merchant inbox's secret); absent for entries no secret verified (reconcile).
   * An order event verified by one secret is stored as a copy of one verified by another: see
   * {@link InboxStore.insert} and src/inbox/copies.ts.
   */
  verifiedBy?: string | null;
  /**
   * The earliest `receivedAt` of an entry this one may be a copy of: when its secret could begin to
   * deliver (a tenant's: `pairAfterOf(when the registry stored it, receivedAt)`, src/inbox/copies.ts).
   * @default from the first time the store saw its secret verify an order event, less
   * `PAIR_SLACK_MS`, and no more than `PAIR_WINDOW_MS` before `receivedAt`
   */
  pairAfter?: number;
}

export { PAIR_WINDOW_MS } from './copies.ts';

/** How long {@link InboxStore.insert} may wait. */
export interface InsertOptions {
  /** Give up (throw) after this many ms of waiting for the store. @default the store's own limit */
  timeoutMs?: number;
}

/** An entry as listed: everything but the payload. */
export interface InboxEntry {
  /** The delivery id. */
  id: string;
  /** The tenant it was received for; `null` in a single-merchant inbox. */
  tenant: string | null;
  event: string;
  orderId: string | null;
  ts: number;
  status: InboxEntryStatus;
  known: boolean;
  /** How many times a worker has started its handler. */
  attempts: number;
  /** The message of the handler's last error (never the payload). */
  lastError: string | null;
  receivedAt: number;
  /** When a pending entry may run next. */
  nextAttemptAt: number;
  /** When it became `done` or `dead`. */
  finishedAt: number | null;
  /** Where its body differs from the SDK's schema (paths, never values); `null` when it matches. */
  schemaIssues: readonly string[] | null;
  /** The order's human-readable number, when the store lists it (the dashboard's queries do). */
  displayNumber?: string | null;
  /** The order's `external_order_id`, when the store lists it. */
  externalOrderId?: string | null;
  /** The opaque id of the secret that verified it (an endpoint id, or a hash prefix of the secret); `null` for a reconcile entry. */
  verifiedBy?: string | null;
  /**
   * The delivery id of the entry this one is a copy of: the same order event delivered through the
   * other of two endpoints (two secrets), stored `done` for the audit and never run. `null` otherwise.
   */
  copyOf?: string | null;
}

/** An entry with its payload: only ever returned when asked for by delivery id, or to a worker. */
export interface InboxEntryWithPayload extends InboxEntry {
  /** `null` once retention removed it. */
  payload: string | null;
}

/** What a claim asks for. */
export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** How long an `order.status_changed` without its order's `order.created` waits for it. */
  orderWaitMs: number;
  /**
   * The tenant this worker took work of last (the last entry of its previous claim): due entries
   * are taken tenant by tenant in turn starting after it, so that one tenant's backlog does not
   * delay another's new entry by more than one claim. Absent: from the first tenant.
   */
  afterTenant?: string | null;
  /**
   * Told the last tenant this claim looked at. A store looks at a bounded number of tenants per
   * claim (those with due entries that cannot run yet cost a look too); the worker passes this as
   * the next claim's `afterTenant`, so that the next claim goes on from there and every tenant's
   * turn comes. A store that always goes round every tenant need not call it.
   */
  walkedTo?: (tenant: string) => void;
}

/** Narrows a read, a retry or a purge to one tenant's entries; without it, every tenant's. */
export interface TenantFilter {
  tenant?: string;
}

/** How a failed run ends. */
export interface FailRequest {
  workerId: string;
  /** The entry's tenant (as claimed). */
  tenant?: string | null;
  error: string;
  now: number;
  /** When to try again; `null` makes the entry `dead`. */
  nextAttemptAt: number | null;
}

/** The counts of `inbox.stats()`. */
export interface InboxStats {
  /** Every entry the store holds (each delivery id once). */
  received: number;
  pending: number;
  processing: number;
  done: number;
  dead: number;
  /** Age of the oldest entry waiting to run (pending or processing), 0 when none. */
  oldestPendingAgeMs: number;
  /** Entries (of any status) whose authentic body does not match the SDK's schema. */
  invalidPayload: number;
  /**
   * Missed deliveries still open: of the inbox's endpoints, `dead` or `retrying` at the service, not
   * arrived, not acknowledged, not recovered; absent until a reconcile has run. Filled by
   * `inbox.stats()`, not by stores.
   */
  missed?: number;
}

/**
 * What retention and `purge` delete. Deleting entries does not rewrite history: a store with
 * {@link InboxStore.purgePreview} keeps what it deletes counted in {@link InboxStore.activity}.
 */
export interface PurgeRequest extends TenantFilter {
  status: 'done' | 'dead';
  /** Entries finished before this time. */
  finishedBefore: number;
  /** `payload`: keep the row (and its delivery id for deduplication) but clear the payload; `entry`: delete the row. */
  what: 'payload' | 'entry';
}

/**
 * A durable store of inbox entries. Every method is one atomic operation. Claims must be safe with
 * several workers in several processes: an entry is leased to one worker at a time.
 */
export interface InboxStore {
  /** Creates tables if needed (idempotent). Called by the inbox before first use. */
  migrate(): Promise<void>;
  /**
   * Stores a delivery durably; `duplicate` (and nothing changed) when its id is already there.
   * With `timeoutMs`, a store that waits for a lock gives up (throws) once that time has passed:
   * the receiver passes what is left of `storeTimeoutMs`, so that no write keeps retrying after
   * its 503 went out. For an order event it also keeps the order's {@link InboxOrderState} and what
   * the order has had, and decides in the same transaction whether the event repeats a change the
   * other way already brought: a reconcile entry for a status the order is already in (or has
   * left since the state it was made from), a real delivery of a status a reconcile entry brought
   * and no real delivery has since (unless the order went on and came back). Such an entry is
   * stored `done`, its handler never run, returning `duplicate` (or `stored` where the store learns
   * it only after writing a real delivery). The rules are src/inbox/order-history.ts's
   * `applyOrderEvent`. Keeping order state and covering are optional, like the reconciliation methods below.
   *
   * Copies: an order event with a `verifiedBy` is stored as a copy (`done`, `copyOf` the other's
   * delivery id, its handler never run, the order's state untouched) when an entry of the same
   * tenant, `event`, `order_id` and, for `order.status_changed`, `previous_status` and `status`,
   * verified by another secret, received at or after `pairAfter` (by default: from when the store
   * first saw this entry's secret verify an order event), is not yet paired (the latest such one),
   * unless an unpaired `order.status_changed` verified by this entry's secret and received after
   * that one brought the order into this change's `previous_status` (the order came back through
   * this secret alone: a repeat). Whichever of the two arrived first runs. Entries of one secret
   * are never paired.
   */
  insert(entry: NewInboxEntry, options?: InsertOptions): Promise<'stored' | 'duplicate'>;
  /**
   * Leases up to `limit` runnable entries to `workerId` until `now + leaseMs`, adding 1 to their
   * `attempts`. Runnable: `pending` and due, or `processing` with an expired lease; and the earliest
   * (by `ts`, then arrival) unfinished entry of its order, with no other entry of the order leased
   * (an unfinished `order.created` comes before its order's other events whatever their `ts`);
   * and an `order.status_changed` waits for its order's `order.created` until `receivedAt + orderWaitMs`.
   * Orders are per tenant. Entries with an expired lease first; then due ones, tenant by tenant in
   * turn after `afterTenant` (each tenant's earliest first), returned in the order taken.
   */
  claim(request: ClaimRequest): Promise<InboxEntryWithPayload[]>;
  /** Moves the lease on; `false` when the worker no longer holds it. `tenant`: the entry's (any, left out). */
  extendLease(deliveryId: string, workerId: string, leaseUntil: number, tenant?: string | null): Promise<boolean>;
  /** Marks a leased entry `done`; `false` when the worker no longer holds the lease. */
  complete(deliveryId: string, workerId: string, now: number, tenant?: string | null): Promise<boolean>;
  /** Ends a leased run with an error: back to `pending` at `nextAttemptAt`, or `dead`. */
  fail(deliveryId: string, request: FailRequest): Promise<boolean>;
  /** The payload of the order's `order.created` entry of that tenant (`''`/absent: a single-merchant inbox), if the store has it. */
  orderCreatedPayload(orderId: string, tenant?: string | null): Promise<string | null>;
  /** The entry of that delivery id (of `tenant`; of any tenant when left out). */
  get(deliveryId: string, tenant?: string | null): Promise<InboxEntryWithPayload | undefined>;
  /** Entries of a status (or all), oldest first, after the delivery id cursor `after`; of one tenant with `tenant`. */
  list(options: { status?: InboxEntryStatus; after?: { receivedAt: number; id: string }; limit: number; tenant?: string }): Promise<InboxEntry[]>;
  /** The counts of every tenant's entries, or of one with `{ tenant }`. */
  stats(now: number, filter?: TenantFilter): Promise<InboxStats>;
  /** A `done` or `dead` entry back to `pending`, attempts reset; `false` when there is none. */
  retry(deliveryId: string, now: number, tenant?: string | null): Promise<boolean>;
  /** Every `dead` entry (of one tenant, with `{ tenant }`) back to `pending`; how many. */
  retryDead(now: number, filter?: TenantFilter): Promise<number>;
  purge(request: PurgeRequest): Promise<number>;
  /** Calls `listener` when another process may have stored an entry (Postgres LISTEN); optional. */
  subscribe?(listener: () => void): Promise<() => void>;
  close(): Promise<void>;
  /**
   * Reconciliation (optional: `inbox.reconcile` refuses a store without it). Orders to read back:
   * those whose last event was received at or before `seenBefore`, not checked since `checkedBefore`,
   * and whose last status is not in `finalStatuses` or whose `order.created` the inbox lacks;
   * least recently checked (or heard of) first, at most `limit`.
   */
  staleOrders?(request: StaleOrdersRequest): Promise<InboxOrderState[]>;
  /**
   * Records that orders (of `tenant`: `''`/absent for a single-merchant inbox) were read back at
   * `now`. `status`, what the service said, becomes the order's status when the inbox knew none, or
   * when `version` is given and nothing was stored for the order since the state of that version
   * was read (the status it had is then left); a status a later event brought is kept.
   */
  markChecked?(checks: readonly { orderId: string; status?: string; version?: number }[], now: number, tenant?: string | null): Promise<void>;
  /** Keeps the outcome of the last reconcile (of `record.tenant`), replacing the one before. */
  saveReconcile?(record: ReconcileRecord): Promise<void>;
  /** The outcome of the last reconcile (of `tenant`: `''`/absent for a single-merchant inbox), if one ran. */
  lastReconcile?(tenant?: string | null): Promise<ReconcileRecord | undefined>;
  /** When each of these tenants was last reconciled (tenants never reconciled are left out). */
  reconciledAt?(tenants: readonly string[]): Promise<Map<string, number>>;
  /**
   * Keeps the missed deliveries a reconcile found: one it did not know is kept open from `now`; one
   * it knows gets the service's latest status, attempts, error and give-up time, and stays ended if
   * it was (an acknowledged miss the delivery log still lists does not come back). Returns the ids
   * it did not know. Optional, with {@link listMissed} and {@link endMissed}: without them a
   * reconcile's misses last until the next reconcile. `tenant`: whose endpoints they were.
   */
  recordMissed?(missed: readonly MissedDelivery[], now: number, tenant?: string | null): Promise<string[]>;
  /** Open misses oldest first (by `createdAt`), or ended ones most recently ended first; of one tenant with `tenant`. */
  listMissed?(request: { open: boolean; limit: number; tenant?: string }): Promise<MissedRecord[]>;
  /** Ends open misses (those named, or all); returns the ids it ended. */
  endMissed?(request: EndMissedRequest): Promise<string[]>;

  // What the dashboard (integration-sdk/dashboard) reads and records. Optional so that a store
  // written for the inbox alone keeps working; both shipped stores have them, and the conformance
  // suite checks them on any store that has them.

  /** Entries newest first (by `receivedAt`, then delivery id), filtered, one keyset page at a time. */
  page?(request: InboxPageRequest): Promise<InboxEntry[]>;
  /** Entries received and finished (`done`, `dead`) per bucket of `bucketMs` from `since` to `until`. */
  activity?(request: InboxActivityRequest): Promise<InboxActivityBucket[]>;
  /** Which of these delivery ids the store holds (for `tenant`; any tenant's when left out). */
  has?(deliveryIds: readonly string[], tenant?: string | null): Promise<Set<string>>;
  /** Records that a worker is alive (`claimed`: and took work) at `now`. */
  heartbeat?(beat: InboxHeartbeat): Promise<void>;
  /** The workers seen in the last day, most recent first. */
  workers?(): Promise<InboxWorkerSeen[]>;
  /** Appends an operator's action to the action log. */
  recordAction?(action: InboxAction): Promise<void>;
  /** The action log, newest first. */
  actions?(limit: number): Promise<InboxAction[]>;
  /**
   * How many entries `purge({ status, finishedBefore, what: 'entry' })` would delete, and the first
   * of them: what the dashboard states before it deletes anything. A store that has it also keeps
   * the counts of what `purge` deletes in `activity()` (received, done and dead per hour).
   */
  purgePreview?(request: PurgePreviewRequest): Promise<PurgePreview>;
}

/** A keyset page of {@link InboxStore.page}. */
export interface InboxPageRequest extends TenantFilter {
  status?: InboxEntryStatus;
  event?: string;
  /** The events of one order. */
  orderId?: string;
  /** An exact delivery id, order id, display number or external order id. */
  search?: string;
  /** Entries strictly older than this one (the last row of the previous page). */
  before?: { receivedAt: number; id: string };
  limit: number;
}

/** What {@link InboxStore.activity} counts. */
export interface InboxActivityRequest {
  since: number;
  /** The end of the last bucket (exclusive); at most 10,000 buckets. */
  until: number;
  bucketMs: number;
}

/** What {@link InboxStore.purgePreview} asks: the entries a purge with the same status and time would delete. */
export interface PurgePreviewRequest extends TenantFilter {
  status: 'done' | 'dead';
  finishedBefore: number;
  /** How many of them to list (the count is of all). */
  limit: number;
}

/** What {@link InboxStore.purgePreview} answers. */
export interface PurgePreview {
  /** How many entries the purge would delete. */
  count: number;
  /** The first `limit` of them, oldest finished first, with their order's references. */
  entries: InboxEntry[];
}

/** One bucket of {@link InboxStore.activity}; buckets with nothing in them may be left out. */
export interface InboxActivityBucket {
  /** The bucket's start: `since + k * bucketMs`. */
  start: number;
  received: number;
  done: number;
  dead: number;
}

/** A worker's sign of life. */
export interface InboxHeartbeat {
  workerId: string;
  now: number;
  /** Whether its last claim took work. */
  claimed: boolean;
}

/** A worker as {@link InboxStore.workers} lists it. */
export interface InboxWorkerSeen {
  workerId: string;
  seenAt: number;
  /** When it last took work, if it did in the last day. */
  claimedAt: number | null;
}

/** One line of the action log: who did what, when. */
export interface InboxAction {
  at: number;
  /** Who: a user name, or how the request was let in. */
  actor: string;
  /** `retry`, `retry-dead`, `purge`, `webhook-test`. */
  action: string;
  /** What it touched and how it ended (a delivery id, a count); never personal data. */
  detail: string;
}

/**
 * What the inbox knows of one order, kept by `insert` for every order event: the status of its
 * latest `order.status_changed` (by `ts`; an `order.created`'s status counts only while no change
 * is known), when its last event arrived, when reconcile last read it back.
 */
export interface InboxOrderState {
  orderId: string;
  /** Its tenant; absent in a single-merchant inbox. */
  tenant?: string;
  /** `null` when no stored event showed one (payloads purged before this was kept). */
  status: string | null;
  /** The `ts` of the event the status came from (0 for an `order.created`). */
  statusTs: number;
  /** `receivedAt` of its latest event, epoch ms. */
  lastEventAt: number;
  /** When reconcile last read it back, epoch ms. */
  checkedAt: number | null;
  /** Whether the inbox holds an `order.created` of it (real or reconciled). */
  hasCreated: boolean;
  /**
   * How many order events of it the store holds; a reconcile entry made from this state carries it
   * as `orderVersion`. Absent from a store that keeps no history.
   */
  version?: number;
}

/** What `staleOrders` asks for. */
export interface StaleOrdersRequest {
  /** Orders of this tenant (`''`/absent: a single-merchant inbox). */
  tenant?: string | null;
  seenBefore: number;
  checkedBefore: number;
  finalStatuses: readonly string[];
  limit: number;
}

/**
 * A delivery the service lists as `dead` or `retrying` whose delivery id is not in the inbox: it
 * failed and never arrived. Never holds a payload.
 */
export interface MissedDelivery {
  deliveryId: string;
  event: string;
  /** `dead` or `retrying`. */
  status: string;
  endpointId: string;
  lastError: string | null;
  /** When the service emitted it (ISO 8601). */
  createdAt: string;
  /** Attempts made so far (6 for a dead one). */
  attemptCount: number;
  /**
   * When the service gives up on a `retrying` delivery (ISO 8601): its next attempt time plus the
   * rest of the retry schedule of spec 6.4 (each later attempt failing at once); `null` for `dead`.
   */
  givesUpAt: string | null;
}

/** How a missed delivery stopped being missed. */
export type MissedEnding = 'arrived' | 'acknowledged' | 'recovered';

/** A missed delivery as the store keeps it, from the reconcile that first found it until it ends. */
export interface MissedRecord extends MissedDelivery {
  /** The tenant whose endpoint it was; absent in a single-merchant inbox. */
  tenant?: string;
  /** When a reconcile first found it, epoch ms. */
  firstSeenAt: number;
  /** `null` while open; else how, when and (for an acknowledgement) by whom it ended. */
  ended: { how: MissedEnding; at: number; by: string | null } | null;
}

/** What {@link InboxStore.endMissed} ends. */
export interface EndMissedRequest extends TenantFilter {
  /** Delivery ids, or every open miss. */
  deliveryIds: readonly string[] | 'all';
  how: MissedEnding;
  at: number;
  /** Who acknowledged it; `null` for one that arrived or was recovered. */
  by: string | null;
}

/** The outcome of a reconcile, as the store keeps it for `stats()` and `doctor --store`. */
export interface ReconcileRecord {
  /** The tenant it reconciled (`''`/absent: a single-merchant inbox). */
  tenant?: string;
  ranAt: number;
  /** The misses open after it (a store without {@link InboxStore.listMissed} keeps them only here). */
  missed: MissedDelivery[];
  /** The endpoints whose deliveries it counted; absent: every endpoint (a record an earlier version kept). */
  endpointIds?: string[];
}

/** A row of the shipped stores' missed table, as either driver returns it. */
export interface MissedRow {
  delivery_id: string;
  event: string;
  status: string;
  endpoint_id: string;
  last_error: string | null;
  created_at: string;
  attempt_count: number | string;
  gives_up_at: string | null;
  first_seen_at: number | string;
  ended: string | null;
  ended_at: number | string | null;
  ended_by: string | null;
  tenant?: string;
}

export function missedFromRow(row: MissedRow): MissedRecord {
  return {
    // Only a tenant's: a single-merchant inbox's misses read as they always did.
    ...(row.tenant !== undefined && row.tenant !== '' && { tenant: row.tenant }),
    deliveryId: row.delivery_id,
    event: row.event,
    status: row.status,
    endpointId: row.endpoint_id,
    lastError: row.last_error,
    createdAt: row.created_at,
    attemptCount: Number(row.attempt_count),
    givesUpAt: row.gives_up_at,
    firstSeenAt: Number(row.first_seen_at),
    ended: row.ended === null ? null : { how: row.ended as MissedEnding, at: Number(row.ended_at), by: row.ended_by },
  };
}

/** The order events whose per-order state the inbox keeps. */
export const ORDER_EVENTS: readonly string[] = ['order.created', 'order.status_changed'];

/** Whether `insert` keeps per-order state for this entry. */
export function tracksOrder(entry: Pick<NewInboxEntry, 'event' | 'orderId'>): entry is Pick<NewInboxEntry, 'event'> & { orderId: string } {
  return entry.orderId !== null && ORDER_EVENTS.includes(entry.event);
}

/** `data.status` of an order event: `entry.orderStatus` when given, else read from the payload. */
export function orderStatusOf(entry: NewInboxEntry): string | null {
  if (entry.orderStatus !== undefined) return entry.orderStatus;
  try {
    const status = (JSON.parse(entry.payload) as { data?: { status?: unknown } } | null)?.data?.status;
    return typeof status === 'string' ? status : null;
  } catch {
    return null;
  }
}

/** A row of the per-order table, as either driver returns it. */
export interface InboxOrderRow {
  order_id: string;
  tenant?: string;
  status: string | null;
  status_ts: number | string;
  last_event_at: number | string;
  checked_at: number | string | null;
  has_created: number | boolean;
  version?: number | string;
}

export function orderStateFromRow(row: InboxOrderRow): InboxOrderState {
  return {
    orderId: row.order_id,
    // Only a tenant's: a single-merchant inbox's orders read as they always did.
    ...(row.tenant !== undefined && row.tenant !== '' && { tenant: row.tenant }),
    status: row.status,
    statusTs: Number(row.status_ts),
    lastEventAt: Number(row.last_event_at),
    checkedAt: row.checked_at === null ? null : Number(row.checked_at),
    hasCreated: Boolean(row.has_created),
    ...(row.version !== undefined && { version: Number(row.version) }),
  };
}

/** Per-order state from stored entries, oldest first: how a database an earlier version wrote is backfilled. */
export function backfillOrderStates(rows: Iterable<{ order_id: string; event: string; ts: number | string; received_at: number | string; status: string | null }>): InboxOrderState[] {
  const states = new Map<string, InboxOrderState>();
  for (const row of rows) {
    let state = states.get(row.order_id);
    if (!state) {
      state = { orderId: row.order_id, status: null, statusTs: 0, lastEventAt: 0, checkedAt: null, hasCreated: false };
      states.set(row.order_id, state);
    }
    const ts = Number(row.ts);
    state.lastEventAt = Math.max(state.lastEventAt, Number(row.received_at));
    if (row.event === 'order.created') {
      state.hasCreated = true;
      if (state.status === null) state.status = row.status;
    } else if (row.status !== null && (ts >= state.statusTs || state.status === null)) {
      state.status = row.status;
      state.statusTs = ts;
    }
  }
  return [...states.values()];
}

/** `stats()` from per-status counts; shared by the shipped stores. */
export function statsOf(
  counts: readonly { status: string; n: number | string }[],
  oldestPendingAt: number | string | null,
  now: number,
  invalidPayload: number | string = 0,
): InboxStats {
  const stats: InboxStats = { received: 0, pending: 0, processing: 0, done: 0, dead: 0, oldestPendingAgeMs: 0, invalidPayload: Number(invalidPayload) };
  for (const { status, n } of counts) {
    const count = Number(n);
    stats.received += count;
    if (status === 'pending' || status === 'processing' || status === 'done' || status === 'dead') stats[status] = count;
  }
  if (oldestPendingAt !== null) stats.oldestPendingAgeMs = Math.max(0, now - Number(oldestPendingAt));
  return stats;
}

/** A row of the shipped stores' table, as either driver returns it (numbers may come as strings). */
export interface InboxRow {
  tenant: string;
  delivery_id: string;
  event: string;
  order_id: string | null;
  ts: number | string;
  status: InboxEntryStatus;
  known: boolean | number;
  attempts: number | string;
  last_error: string | null;
  received_at: number | string;
  next_attempt_at: number | string;
  finished_at: number | string | null;
  /** A JSON array of paths, or null. */
  schema_issues: string | null;
  payload?: string | null;
  display_number?: string | null;
  external_order_id?: string | null;
  verified_by: string | null;
  copy_of: string | null;
}

/** The columns of {@link InboxRow} but the payload, as the shipped stores select them. */
export const INBOX_COLUMNS = 'tenant, delivery_id, event, order_id, ts, status, known, attempts, last_error, received_at, next_attempt_at, finished_at, schema_issues, verified_by, copy_of';

/** The columns of a new entry, in the order of {@link newEntryValues}. */
export const NEW_ENTRY_COLUMNS = 'delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at, schema_issues, last_error, finished_at, tenant, verified_by, pair_key';

/**
 * The values of an insert into the shipped stores' table, in the order of {@link NEW_ENTRY_COLUMNS}:
 * delivery_id, event, order_id, ts, payload, known (0/1), status, received_at, next_attempt_at,
 * schema_issues, last_error, finished_at, tenant, verified_by, pair_key.
 */
export function newEntryValues(
  entry: NewInboxEntry,
): [string, string, string | null, number, string, number, string, number, number, string | null, string | null, number | null, string, string | null, string | null] {
  const dead = entry.status === 'dead';
  const issues = entry.schemaIssues ? JSON.stringify(entry.schemaIssues) : null;
  return [
    entry.deliveryId, entry.event, entry.orderId, entry.ts, entry.payload, entry.known ? 1 : 0, dead ? 'dead' : 'pending', entry.receivedAt, entry.receivedAt, issues,
    dead ? (entry.lastError ?? null) : null, dead ? entry.receivedAt : null, entry.tenant ?? '', entry.verifiedBy ?? null, pairKeyOf(entry),
  ];
}

/** The tenant as stored: `''` for a single-merchant inbox. */
export const storedTenant = (tenant: string | null | undefined): string => tenant ?? '';

// Postgres text cannot hold U+0000, and node:sqlite before Node 24 cuts a string at one, where a JSON
// string may hold it (an `order_id` of "a\u0000b", a body with a NUL byte): such a value is stored
// as a marked JSON string, and read back as it was. Values without a NUL (all real ones) are
// stored as they are.
const NUL_MARK = '\u0001integration-sdk:json:';
export function toText<T extends string | null>(value: T): T {
  return (value !== null && (value.includes('\u0000') || value.startsWith(NUL_MARK)) ? NUL_MARK + JSON.stringify(value) : value) as T;
}
export function fromText<T extends string | null | undefined>(value: T): T {
  return (typeof value === 'string' && value.startsWith(NUL_MARK) ? (JSON.parse(value.slice(NUL_MARK.length)) as string) : value) as T;
}
/** A row with its order id and payload as they were before {@link toText}. */
export const decodedRow = (row: InboxRow): InboxRow => ({ ...row, order_id: fromText(row.order_id), payload: fromText(row.payload) });

/** An {@link InboxEntry} from a row of the shipped stores' table. */
export function entryFromRow(row: InboxRow): InboxEntry {
  return {
    id: row.delivery_id,
    tenant: row.tenant === '' || row.tenant === undefined ? null : row.tenant,
    event: row.event,
    orderId: row.order_id,
    ts: Number(row.ts),
    status: row.status,
    known: Boolean(row.known),
    attempts: Number(row.attempts),
    // Scrubbed again on the way out: rows an earlier version wrote kept the handler's text whole.
    lastError: row.last_error === null ? null : scrubPatterns(row.last_error),
    receivedAt: Number(row.received_at),
    nextAttemptAt: Number(row.next_attempt_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    schemaIssues: row.schema_issues === null || row.schema_issues === undefined ? null : (JSON.parse(row.schema_issues) as string[]),
    verifiedBy: row.verified_by ?? null,
    copyOf: row.copy_of ?? null,
    ...(row.display_number !== undefined ? { displayNumber: row.display_number, externalOrderId: row.external_order_id ?? null } : {}),
  };
}

/** The same with its payload. */
export function entryWithPayloadFromRow(row: InboxRow): InboxEntryWithPayload {
  return { ...entryFromRow(row), payload: row.payload ?? null };
}

/** The columns the dashboard's lists select: {@link INBOX_COLUMNS} and the order's references. */
export const PAGE_COLUMNS = `${INBOX_COLUMNS}, display_number, external_order_id`;

// A reference longer than any real one is not kept (the order stays findable by its ids): an
// indexed column must stay under the ~2.7 KB a Postgres btree entry holds.
const reference = (value: unknown): string | null => (typeof value === 'string' && value.length <= 200 ? value : null);

/**
 * The order's references for a new entry: as given, else read from its payload (`data.display_number`,
 * `data.external_order_id`), so that entries stored by any path can be searched by them.
 */
export function orderReferences(entry: NewInboxEntry): { displayNumber: string | null; externalOrderId: string | null } {
  if (entry.displayNumber !== undefined || entry.externalOrderId !== undefined) {
    return { displayNumber: reference(entry.displayNumber), externalOrderId: reference(entry.externalOrderId) };
  }
  if (entry.orderId === null) return { displayNumber: null, externalOrderId: null };
  try {
    const data = (JSON.parse(entry.payload) as { data?: { display_number?: unknown; external_order_id?: unknown } }).data;
    return { displayNumber: reference(data?.display_number), externalOrderId: reference(data?.external_order_id) };
  } catch {
    return { displayNumber: null, externalOrderId: null };
  }
}

/**
 * The SQL of {@link InboxStore.page} for a table of the shipped stores: only the filters asked for,
 * so that each combination walks its index (received_at, status or event first, then received_at
 * and delivery id) backwards from the cursor and stops at the limit. `placeholder(n, type)` writes
 * the n-th parameter in the driver's syntax.
 */
export function pageQuery(table: string, request: InboxPageRequest, placeholder: (n: number, type: 'text' | 'bigint') => string): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown, type: 'text' | 'bigint' = 'text') => {
    params.push(value);
    return placeholder(params.length, type);
  };
  const where: string[] = [];
  // The tenant's own index holds only entries of a tenant (a single-merchant inbox pays nothing for it).
  if (request.tenant !== undefined) where.push(request.tenant === '' ? `tenant = ''` : `tenant = ${param(request.tenant)} AND tenant <> ''`);
  if (request.status !== undefined) where.push(`status = ${param(request.status)}`);
  if (request.event !== undefined) where.push(`event = ${param(request.event)}`);
  if (request.orderId !== undefined) where.push(`order_id = ${param(request.orderId)}`);
  if (request.search !== undefined) {
    const term = request.search.trim();
    const number = term.replace(/^#/, '');
    where.push(
      `(delivery_id = ${param(term)} OR order_id = ${param(term)} OR display_number = ${param(term)} OR display_number = ${param(number)} OR external_order_id = ${param(term)})`,
    );
  }
  if (request.before !== undefined) where.push(`(received_at, delivery_id) < (${param(request.before.receivedAt, 'bigint')}, ${param(request.before.id)})`);
  const sql = `SELECT ${PAGE_COLUMNS} FROM ${table}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY received_at DESC, delivery_id DESC LIMIT ${param(request.limit, 'bigint')}`;
  return { sql, params };
}

/** {@link InboxActivityBucket}s from the rows of the two activity queries of the shipped stores. */
export function activityOf(
  since: number,
  bucketMs: number,
  received: readonly { b: number | string; n: number | string }[],
  finished: readonly { status: string; b: number | string; n: number | string }[],
): InboxActivityBucket[] {
  const buckets = new Map<number, InboxActivityBucket>();
  const bucket = (index: number | string) => {
    const key = Number(index);
    let found = buckets.get(key);
    if (!found) buckets.set(key, (found = { start: since + key * bucketMs, received: 0, done: 0, dead: 0 }));
    return found;
  };
  for (const row of received) bucket(row.b).received += Number(row.n);
  for (const row of finished) if (row.status === 'done' || row.status === 'dead') bucket(row.b)[row.status] += Number(row.n);
  return [...buckets.values()].sort((a, b) => a.start - b.start);
}
