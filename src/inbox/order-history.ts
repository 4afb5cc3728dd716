/**
 * "A status handled once" (docs/inbox.md, Reconciliation): what an order has already had, and the
 * rules that decide, inside the store's insert transaction, whether an order event runs or is
 * stored covered (`done`, its handler never run) because the same change already came the other
 * way (a reconcile entry for a status a real delivery brought, or the reverse).
 *
 * Nothing here reads a clock: the service stamps a retried delivery with the time of the attempt,
 * not of the change, so a `ts` cannot tell a late delivery of an old change from a new one. The
 * rules work on the order of arrival (each stored order event adds one to the order's `version`)
 * and on the `previous_status` each real delivery carries (spec 2.8).
 *
 * The SQLite store runs {@link applyOrderEvent} in its write transaction; the Postgres store runs the
 * same rules in its trigger (src/inbox/postgres/order-history.ts); both replay stored entries
 * through {@link applyOrderEvent} when they migrate a database an earlier version wrote.
 */

/** What the store keeps of one status of one order (all versions are the order's, see {@link OrderHistory.version}). */
export interface StatusEvidence {
  /** The last event (real or reconciled) that brought the order into this status. */
  seenVersion: number | null;
  /** The `previous_status` of the last real delivery that brought it: where the order came from. */
  enteredFrom: string | null;
  /** The last event showing that the order left this status (a change from it, or the order moving on). */
  leftVersion: number | null;
  /** A reconcile entry brought this status and no real delivery of it has arrived since: the version it was stored at. */
  coverVersion: number | null;
}

/** Per order: its state (as `InboxOrderState` lists it) and what it has had. */
export interface OrderHistory {
  /** How many order events the store holds of it (each insert adds one, covered or not). */
  version: number;
  status: string | null;
  statusTs: number;
  /**
   * When what brought the status arrived (`receivedAt`), or {@link RECONCILE_RANK} for a reconcile
   * read: a change that does not follow on from the status takes its place only when it arrived later.
   */
  statusRank: number;
  lastEventAt: number;
  hasCreated: boolean;
  /** A reconcile `order.created` waits for its real one, which is then stored covered. */
  createdCover: boolean;
  statuses: Map<string, StatusEvidence>;
}

/** An order event as the rules see it. */
export interface OrderEvent {
  event: string;
  /** `data.status`. */
  status: string | null;
  /** `data.previous_status` of an `order.status_changed`. */
  previousStatus: string | null;
  /** Kept as the state's `statusTs`; never compared (a retry carries its attempt's time). */
  ts: number;
  receivedAt: number;
  reconcile: boolean;
  /** For a reconcile entry: the order's `version` in the state it was made from. */
  basedOnVersion?: number | null;
}

/**
 * The rank of a status a reconcile read: what the service said when it was read stays the order's
 * status until a change that follows on from it arrives (a late delivery that does not is older).
 */
export const RECONCILE_RANK = Number.MAX_SAFE_INTEGER;

export function emptyHistory(): OrderHistory {
  return { version: 0, status: null, statusTs: 0, statusRank: 0, lastEventAt: 0, hasCreated: false, createdCover: false, statuses: new Map() };
}

const NO_EVIDENCE: StatusEvidence = { seenVersion: null, enteredFrom: null, leftVersion: null, coverVersion: null };

/**
 * Whether the order is known to have left `status` since it last entered it (a delivery arriving
 * older than the order's state leaves it at once, at the version that brought it).
 */
function left(evidence: StatusEvidence): boolean {
  return evidence.leftVersion !== null && (evidence.seenVersion === null || evidence.leftVersion >= evidence.seenVersion);
}

/** Whether the order is in `status` as far as the store knows: its state, or entered and not left since. */
function isCurrent(history: OrderHistory, status: string): boolean {
  const evidence = history.statuses.get(status) ?? NO_EVIDENCE;
  return history.status === status || (evidence.seenVersion !== null && !left(evidence));
}

/**
 * Whether a reconcile entry bringing `status` repeats what the order already had: the order is in
 * that status already, or it left it after the state the entry was made from was read (it is past it).
 */
function reconcileCovered(history: OrderHistory, status: string, basedOnVersion: number | null | undefined): boolean {
  if (isCurrent(history, status)) return true;
  const leftVersion = history.statuses.get(status)?.leftVersion ?? null;
  return basedOnVersion != null && leftVersion !== null && leftVersion > basedOnVersion;
}

/**
 * Whether a real delivery of `status` is the change a reconcile entry brought: one did and none has
 * arrived since, unless the delivery follows on from where the order is (its `previous_status` is
 * the order's status): the order went on from the reconciled status, however many steps, and
 * really came back. The reconciled change's own late delivery comes from a status the order had
 * before it, which the order has left.
 */
function realCovered(history: OrderHistory, status: string, previous: string | null): boolean {
  if ((history.statuses.get(status)?.coverVersion ?? null) === null) return false;
  return previous === null || previous !== history.status;
}

/**
 * Whether a real status change becomes the order's state (the order's `ts` plays no part: the
 * service stamps a retry with its attempt's time). It does when it follows on from the order's
 * status (its `previous_status` is it); not when it is known to be older (the order left its
 * status, or the status it came from, already). Else the later arrival wins, except over a status
 * a reconcile read: the service's word at that time, after every change a late delivery brings
 * that does not follow on from it.
 */
function takesState(history: OrderHistory, event: OrderEvent, status: string, previous: string | null): boolean {
  if (history.status === null) return true;
  if (status === history.status) return false;
  if (previous !== null && previous === history.status) return true;
  if (knownOlder(history, status, previous)) return false;
  return event.receivedAt >= history.statusRank;
}

/** A change into `status` from `previous` the order is known to be past: it left either already. */
function knownOlder(history: OrderHistory, status: string, previous: string | null): boolean {
  return left(history.statuses.get(status) ?? NO_EVIDENCE) || (previous !== null && left(history.statuses.get(previous) ?? NO_EVIDENCE));
}

export interface AppliedEvent {
  history: OrderHistory;
  /** Stored `done`, its handler never run. */
  covered: boolean;
  /** The statuses whose evidence changed (the rows to write). */
  changed: Set<string>;
}

/**
 * The order's history after one more of its events, and whether that event is covered. `replay`:
 * rebuilding the history of entries already stored, whose outcome was decided when they arrived
 * (a reconcile entry then always ran).
 */
export function applyOrderEvent(before: OrderHistory, event: OrderEvent, options: { replay?: boolean } = {}): AppliedEvent {
  const history: OrderHistory = { ...before, statuses: new Map(before.statuses) };
  const changed = new Set<string>();
  const version = history.version + 1;
  history.version = version;
  history.lastEventAt = Math.max(history.lastEventAt, event.receivedAt);
  const update = (status: string, change: Partial<StatusEvidence>) => {
    history.statuses.set(status, { ...(history.statuses.get(status) ?? NO_EVIDENCE), ...change });
    changed.add(status);
  };

  if (event.event === 'order.created') {
    const covered = event.reconcile ? history.hasCreated && !options.replay : history.createdCover;
    if (event.reconcile && !covered) history.createdCover = true;
    if (!event.reconcile && covered) history.createdCover = false;
    history.hasCreated = true;
    // An order.created's status counts only while no status is known.
    if (history.status === null && event.status !== null) history.status = event.status;
    return { history, covered, changed };
  }

  const { status } = event;
  if (event.event !== 'order.status_changed' || status === null) return { history, covered: false, changed };
  const previous = event.previousStatus !== null && event.previousStatus !== status ? event.previousStatus : null;
  const moveTo = () => {
    if (history.status !== null && history.status !== status) update(history.status, { leftVersion: version });
    history.status = status;
    history.statusTs = event.ts;
    history.statusRank = event.reconcile ? RECONCILE_RANK : event.receivedAt;
  };

  if (event.reconcile) {
    if (!options.replay && reconcileCovered(history, status, event.basedOnVersion)) {
      // Nothing new, but what the service said is where the order is: the state follows when the
      // order is in that status by what it has had (a late older delivery may have moved it).
      if (history.status !== status && isCurrent(history, status)) moveTo();
      return { history, covered: true, changed };
    }
    // What the service said when it was read is where the order is.
    update(status, { seenVersion: version, coverVersion: version });
    if (previous !== null) update(previous, { leftVersion: version });
    moveTo();
    return { history, covered: false, changed };
  }

  const covered = realCovered(history, status, previous);
  const older = knownOlder(history, status, previous);
  const takes = takesState(history, event, status, previous);
  update(status, { seenVersion: version, enteredFrom: previous, ...(covered && { coverVersion: null }) });
  if (previous !== null) update(previous, { leftVersion: version });
  if (takes) moveTo();
  else if (history.status === status) history.statusTs = Math.max(history.statusTs, event.ts);
  // Known to be older: the order is already past its status. One the state does not take only
  // because a reconcile read ranks above it may be newer (the order skipped a status whose delivery
  // died): seen and not left, so a reconcile that finds the order there stores nothing again.
  else if (older) update(status, { leftVersion: version });
  return { history, covered, changed };
}

/**
 * The order's history once a reconcile read that the service has it in `status`, if that read is
 * the newest word on it: nothing was stored for the order since the state it was made from
 * (`readVersion`). The status it had is then left, and the read one entered, at that version; a
 * status the order is already in changes nothing. `null` when there is nothing to record.
 */
export function recordRead(before: OrderHistory, status: string, readVersion: number): Omit<AppliedEvent, 'covered'> | null {
  if (before.version !== readVersion || before.status === status) return null;
  const history: OrderHistory = { ...before, statuses: new Map(before.statuses) };
  const changed = new Set<string>();
  const update = (name: string, change: Partial<StatusEvidence>) => {
    history.statuses.set(name, { ...(history.statuses.get(name) ?? NO_EVIDENCE), ...change });
    changed.add(name);
  };
  if (history.status !== null) update(history.status, { leftVersion: history.version });
  update(status, { seenVersion: history.version, leftVersion: null });
  history.status = status;
  history.statusRank = RECONCILE_RANK;
  return { history, changed };
}

/** `data.status` and `data.previous_status` of an order event's payload (`null` where absent or not JSON). */
export function statusesOf(payload: string | null): { status: string | null; previousStatus: string | null } {
  if (payload === null) return { status: null, previousStatus: null };
  try {
    const data = (JSON.parse(payload) as { data?: { status?: unknown; previous_status?: unknown } } | null)?.data;
    return {
      status: typeof data?.status === 'string' ? data.status : null,
      previousStatus: typeof data?.previous_status === 'string' ? data.previous_status : null,
    };
  } catch {
    return { status: null, previousStatus: null };
  }
}

/** A stored order event, as a migration reads it back (oldest first). */
export interface StoredOrderEvent {
  order_id: string;
  event: string;
  ts: number | string;
  received_at: number | string;
  payload: string | null;
}

/**
 * The histories of the orders of a database an earlier version wrote, from its order events in the
 * order they were stored: versions, each status's evidence and the open covers. (The state's own
 * status was backfilled by the earlier migration and is kept as it is.)
 */
export function replayHistories(rows: Iterable<StoredOrderEvent>): Map<string, OrderHistory> {
  const histories = new Map<string, OrderHistory>();
  for (const row of rows) {
    const { status, previousStatus } = statusesOf(row.payload);
    let source: unknown;
    try {
      source = row.payload === null ? undefined : (JSON.parse(row.payload) as { source?: unknown } | null)?.source;
    } catch {
      source = undefined;
    }
    const event: OrderEvent = { event: row.event, status, previousStatus, ts: Number(row.ts), receivedAt: Number(row.received_at), reconcile: source === 'reconcile' };
    histories.set(row.order_id, applyOrderEvent(histories.get(row.order_id) ?? emptyHistory(), event, { replay: true }).history);
  }
  return histories;
}
