import type { Clock } from '../clock.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import type { Order } from '../schemas/order.ts';
import { currentMissed, endArrived, endRecovered, MAX_OPEN, missedAdvice, missedAt, readDeliveryLog, type DeliveryLog, type DeliveryLogClient, type OtherEndpoint } from './missed.ts';
import { changeEntry, createdEntry } from './reconcile-entries.ts';
import type { InboxOrderState, InboxStore, MissedDelivery } from './store.ts';

export { currentMissed, givesUpAt } from './missed.ts';
export { derivedDeliveryId } from './reconcile-entries.ts';
export type { OtherEndpoint } from './missed.ts';

/** What reconcile reads through: an `IntegrationClient` fits (its rate limiter, shared or not, paces the reads). */
export interface ReconcileClient extends DeliveryLogClient {
  orders: { get(orderId: string): Promise<Order> };
}

/** Options of `inbox.reconcile`. */
export interface ReconcileOptions {
  /** Needs `orders:read`; `webhooks:manage` for `missed`. */
  client: ReconcileClient;
  /** Re-read orders whose last event (and last check) is older than this. @default 60 */
  staleAfterMinutes?: number;
  /** Orders in these statuses are not re-read (once the inbox holds their `order.created`). @default ['delivered', 'cancelled'] */
  finalStatuses?: readonly string[];
  /** At most this many order reads per call; the least recently checked orders go first, so repeated calls get through all of them. @default 500 */
  maxReads?: number;
  /**
   * The webhook endpoints that deliver to this inbox: only their deliveries count in `missed`.
   * @default `createInbox`'s `endpointIds`, else guessed: the endpoints with a delivery the inbox holds
   */
  endpointIds?: readonly string[];
}

/** What `inbox.reconcile` did and found. */
export interface ReconcileReport {
  /** Orders read back (404s included). */
  ordersChecked: number;
  /** Synthetic `order.status_changed` entries stored to run (one repeating what the order had is not counted). */
  statusChanges: number;
  /** Synthetic `order.created` entries stored, for orders known only from status changes. */
  createdRecovered: number;
  /** Reads answered 404: the order is gone, or outside the key's stores. */
  notFound: number;
  /**
   * Reads that failed for that order alone: an answer the SDK's order schema does not accept (a
   * null e-mail, say), or an id the service refuses. Each is read again at its next stale round; the
   * other orders and `missed` go on.
   */
  unreadable: number;
  /**
   * The misses still open after this run: deliveries of the inbox's endpoints the service lists as
   * `dead` or `retrying` that never reached the inbox, not acknowledged, and (a status change) not
   * recovered by reading. Never a `webhook.test`.
   */
  missed: MissedDelivery[];
  /** Delivery ids of misses this run found for the first time (open or already recovered). */
  newMissed: string[];
  /** Missed status changes this run recovered: it read back every order they could have been about. */
  recovered: MissedDelivery[];
  /** The endpoints whose deliveries were counted. */
  endpointIds: string[];
  /** `true` when no endpoint was named: `endpointIds` are those with a delivery the inbox holds. */
  endpointsGuessed: boolean;
  /** The key's other endpoints (another receiver, a test URL): not this inbox's loss. */
  otherEndpoints: OtherEndpoint[];
  /** What to do about what it found, in sentences. */
  advice: string[];
  /** Why `missed` could not be read (the key lacks `webhooks:manage`); absent when it was. */
  missedUnavailable?: string;
}

export interface ReconcileDeps {
  clock: Clock;
  /** `createInbox`'s `endpointIds`: used when the call names none. */
  endpointIds?: readonly string[];
  /** Told after a synthetic entry was stored, so that a worker in this process wakes at once. */
  onStored?: () => void;
}

/**
 * Reads the delivery log of the inbox's endpoints and keeps what never arrived; reads back the
 * stale, non-final orders the store knows (every one not read since an open missed status change,
 * whatever `staleAfterMinutes` says) and stores a synthetic entry for each difference; then ends
 * the missed status changes that reading recovered. `inbox.reconcile` and
 * `integration-sdk inbox reconcile` both run this.
 */
export async function reconcileStore(store: InboxStore, options: ReconcileOptions, deps: ReconcileDeps): Promise<ReconcileReport> {
  const { client, staleAfterMinutes, finalStatuses, maxReads, endpointIds } = checkOptions(options, deps.endpointIds);
  const reconcilable = reconcileMethods(store);
  const { clock } = deps;
  const report: ReconcileReport = {
    ordersChecked: 0, statusChanges: 0, createdRecovered: 0, notFound: 0, unreadable: 0,
    missed: [], newMissed: [], recovered: [], endpointIds: [], endpointsGuessed: false, otherEndpoints: [], advice: [],
  };

  const log = await readDeliveryLog(client, (ids) => reconcilable.has(ids), endpointIds);
  if (typeof log === 'string') report.missedUnavailable = log;
  else {
    Object.assign(report, { endpointIds: log.endpointIds, endpointsGuessed: log.endpointsGuessed, otherEndpoints: log.otherEndpoints });
    report.newMissed = store.recordMissed ? await store.recordMissed(log.failed, clock.now()) : log.failed.map((each) => each.deliveryId);
  }
  const open = await openMisses(store, log, clock.now());

  for (const state of await ordersToRead(reconcilable, open, { staleBefore: clock.now() - staleAfterMinutes * 60_000, finalStatuses, maxReads })) {
    await readBack(store, reconcilable, client, state, report, deps);
  }

  if (typeof log === 'string') return report;
  report.recovered = await endRecovered(store, open, finalStatuses, clock.now());
  const recovered = new Set(report.recovered.map((each) => each.deliveryId));
  report.missed = open.filter((each) => !recovered.has(each.deliveryId));
  report.advice = missedAdvice(log, report.missed);
  await reconcilable.saveReconcile({ ranAt: clock.now(), missed: report.missed, endpointIds: log.endpointIds });
  return report;
}

/**
 * The misses open before this run's reads, those that arrived since ended. Every kept open miss,
 * whether or not its endpoint is still one this run counts: a miss ends when it arrives, is
 * acknowledged or recovered, never because its secret was rotated or the endpoints named changed.
 */
async function openMisses(store: InboxStore, log: DeliveryLog | string, now: number): Promise<MissedDelivery[]> {
  if (typeof log === 'string') return (await currentMissed(store)) ?? [];
  const kept = store.listMissed ? await store.listMissed({ open: true, limit: MAX_OPEN }) : log.failed;
  return endArrived(store, kept, now);
}

/**
 * The orders to read, least recently checked first, at most `maxReads`: after an outage (an open
 * missed status change) every known non-final order not read since the latest such miss, whatever
 * their staleness; then the stale ones.
 */
async function ordersToRead(
  store: ReconcilableStore,
  open: readonly MissedDelivery[],
  { staleBefore, finalStatuses, maxReads }: { staleBefore: number; finalStatuses: readonly string[]; maxReads: number },
): Promise<InboxOrderState[]> {
  if (maxReads === 0) return [];
  const outage = open.filter((each) => each.event === 'order.status_changed').map(missedAt);
  const orders = outage.length === 0 ? [] : await store.staleOrders({ seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: Math.max(...outage) + 1, finalStatuses, limit: maxReads });
  if (orders.length < maxReads) {
    const chosen = new Set(orders.map((state) => state.orderId));
    const stale = await store.staleOrders({ seenBefore: staleBefore, checkedBefore: staleBefore, finalStatuses, limit: maxReads });
    orders.push(...stale.filter((state) => !chosen.has(state.orderId)).slice(0, maxReads - orders.length));
  }
  return orders;
}

/** Reads one order back and stores what differs; a read that concerns this order alone is counted, not thrown. */
async function readBack(store: InboxStore, reconcilable: ReconcilableStore, client: ReconcileClient, state: InboxOrderState, report: ReconcileReport, deps: ReconcileDeps): Promise<void> {
  const { clock } = deps;
  let order: Order;
  try {
    order = await client.orders.get(state.orderId);
  } catch (error) {
    // Only what concerns this one order is passed over; a refused key, a disabled environment or
    // an unreachable service stops the run (every other read would fail the same way).
    const unreadable = isUnreadable(error);
    if (!isNotFound(error) && !unreadable) throw error;
    report.ordersChecked += 1;
    if (unreadable) {
      // Not read back: it is read again at the next run, and a missed status change (which may be
      // about it) is not recovered until it can be.
      report.unreadable += 1;
      return;
    }
    report.notFound += 1;
    await reconcilable.markChecked([{ orderId: state.orderId }], clock.now());
    return;
  }
  report.ordersChecked += 1;
  let stored = false;
  if (!state.hasCreated && (await store.insert(await createdEntry(order, clock))) === 'stored') {
    report.createdRecovered += 1;
    stored = true;
  }
  if (state.status !== null && state.status !== order.status && (await store.insert(await changeEntry(state, order, clock))) === 'stored') {
    report.statusChanges += 1;
    stored = true;
  }
  // What the service said is recorded as the order's status when the inbox knew none (payloads purged
  // before it kept one), or when nothing was stored for the order since this state was read (no
  // entry made a difference): the next run then compares with it, not with a stale status.
  await reconcilable.markChecked([{ orderId: state.orderId, status: order.status, ...(state.version !== undefined && { version: state.version }) }], clock.now());
  if (stored) deps.onStored?.();
}

type ReconcilableStore = Required<Pick<InboxStore, 'staleOrders' | 'markChecked' | 'has' | 'saveReconcile' | 'lastReconcile'>>;

function reconcileMethods(store: InboxStore): ReconcilableStore {
  const names = ['staleOrders', 'markChecked', 'has', 'saveReconcile', 'lastReconcile'] as const;
  const missing = names.filter((name) => typeof store[name] !== 'function');
  if (missing.length > 0) {
    throw new InvalidInputError([{ path: 'store', message: `this InboxStore cannot reconcile: it lacks ${missing.join(', ')} (see InboxStore in integration-sdk/inbox)` }]);
  }
  return store as ReconcilableStore;
}

/** Checks `endpointIds` (of `createInbox` or `reconcile`): a list of endpoint ids. */
export function checkEndpointIds(value: unknown, path = 'endpointIds'): Array<{ path: string; message: string }> {
  if (value === undefined) return [];
  return Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'string' && id !== '') ? [] : [{ path, message: 'must be a non-empty array of webhook endpoint ids' }];
}

function checkOptions(options: ReconcileOptions, inboxEndpointIds: readonly string[] | undefined): Omit<Required<ReconcileOptions>, 'endpointIds'> & { endpointIds: readonly string[] | undefined } {
  const issues: Array<{ path: string; message: string }> = [];
  const client = options?.client;
  if (typeof client?.orders?.get !== 'function' || typeof client?.webhooks?.list !== 'function' || typeof client?.webhooks?.deliveries !== 'function') {
    issues.push({ path: 'client', message: 'must be an IntegrationClient (orders.get, webhooks.list, webhooks.deliveries)' });
  }
  const staleAfterMinutes = options?.staleAfterMinutes ?? 60;
  if (typeof staleAfterMinutes !== 'number' || !Number.isFinite(staleAfterMinutes) || staleAfterMinutes < 0) issues.push({ path: 'staleAfterMinutes', message: 'must be a number of minutes >= 0' });
  const finalStatuses = options?.finalStatuses ?? ['delivered', 'cancelled'];
  if (!Array.isArray(finalStatuses) || finalStatuses.some((status) => typeof status !== 'string')) issues.push({ path: 'finalStatuses', message: 'must be an array of order statuses' });
  const maxReads = options?.maxReads ?? 500;
  if (!Number.isSafeInteger(maxReads) || maxReads < 0) issues.push({ path: 'maxReads', message: 'must be a whole number >= 0' });
  issues.push(...checkEndpointIds(options?.endpointIds));
  if (issues.length > 0) throw new InvalidInputError(issues);
  return { client, staleAfterMinutes, finalStatuses, maxReads, endpointIds: options.endpointIds ?? inboxEndpointIds };
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 404;
}

/** An answer about this order alone: its body does not fit the schema, or its id is refused (400). */
function isUnreadable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, status } = error as { name?: unknown; status?: unknown };
  return name === 'ResponseValidationError' || name === 'InvalidInputError' || status === 400;
}
