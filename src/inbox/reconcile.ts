import type { Clock } from '../clock.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import type { Order } from '../schemas/order.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../schemas/webhooks.ts';
import type { InboxOrderState, InboxStore, MissedDelivery, NewInboxEntry } from './store.ts';

/** What reconcile reads through: an `IntegrationClient` fits (its rate limiter, shared or not, paces the reads). */
export interface ReconcileClient {
  orders: { get(orderId: string): Promise<Order> };
  webhooks: {
    list(): Promise<WebhookEndpoint[]>;
    deliveries(webhookId: string, options?: { limit?: number }): Promise<WebhookDelivery[]>;
  };
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
}

/** What `inbox.reconcile` did and found. */
export interface ReconcileReport {
  /** Orders read back (404s included). */
  ordersChecked: number;
  /** Synthetic `order.status_changed` entries stored. */
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
  /** Deliveries the service lists as `dead` or `retrying` whose delivery id is not in the inbox. */
  missed: MissedDelivery[];
  /** Why `missed` could not be read (the key lacks `webhooks:manage`); absent when it was. */
  missedUnavailable?: string;
}

/** Spec 6.4: seconds the service waits after the failure of attempt 1, 2, 3, 4, 5; attempt 6 is the last. */
const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 43200];
const DELIVERY_LOG_LIMIT = 100;

export interface ReconcileDeps {
  clock: Clock;
  /** Told after a synthetic entry was stored, so that a worker in this process wakes at once. */
  onStored?: () => void;
}

/**
 * Reads back the stale, non-final orders the store knows, stores a synthetic entry for each
 * difference, and lists the deliveries that never arrived. `inbox.reconcile` and
 * `integration-sdk inbox reconcile` both run this.
 */
export async function reconcileStore(store: InboxStore, options: ReconcileOptions, deps: ReconcileDeps): Promise<ReconcileReport> {
  const { client, staleAfterMinutes, finalStatuses, maxReads } = checkOptions(options);
  const reconcilable = reconcileMethods(store);
  const { clock } = deps;
  const report: ReconcileReport = { ordersChecked: 0, statusChanges: 0, createdRecovered: 0, notFound: 0, unreadable: 0, missed: [] };
  const staleBefore = clock.now() - staleAfterMinutes * 60_000;
  const orders = maxReads === 0 ? [] : await reconcilable.staleOrders({ seenBefore: staleBefore, checkedBefore: staleBefore, finalStatuses, limit: maxReads });
  for (const state of orders) {
    let order: Order;
    try {
      order = await client.orders.get(state.orderId);
    } catch (error) {
      // Only what concerns this one order is passed over; a refused key, a disabled environment or
      // an unreachable service stops the run (every other read would fail the same way).
      const unreadable = isUnreadable(error);
      if (!isNotFound(error) && !unreadable) throw error;
      report.ordersChecked += 1;
      if (unreadable) report.unreadable += 1;
      else report.notFound += 1;
      await reconcilable.markChecked([{ orderId: state.orderId }], clock.now());
      continue;
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
    // A status the inbox never knew (payloads purged before it kept one) is taken as it is now, not as a change.
    await reconcilable.markChecked([{ orderId: state.orderId, status: order.status }], clock.now());
    if (stored) deps.onStored?.();
  }
  const missed = await missedDeliveries(client, reconcilable);
  if (typeof missed === 'string') report.missedUnavailable = missed;
  else {
    report.missed = missed;
    await reconcilable.saveReconcile({ ranAt: clock.now(), missed });
  }
  return report;
}

/**
 * The last reconcile's missed deliveries that still have not arrived; `undefined` when no
 * reconcile has run (or the store keeps no reconciliation).
 */
export async function currentMissed(store: InboxStore): Promise<MissedDelivery[] | undefined> {
  if (!store.lastReconcile || !store.has) return undefined;
  const last = await store.lastReconcile();
  if (!last) return undefined;
  if (last.missed.length === 0) return [];
  const known = await store.has(last.missed.map((each) => each.deliveryId));
  return last.missed.filter((each) => !known.has(each.deliveryId));
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

function checkOptions(options: ReconcileOptions): Required<ReconcileOptions> {
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
  if (issues.length > 0) throw new InvalidInputError(issues);
  return { client, staleAfterMinutes, finalStatuses, maxReads };
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

function isScopeRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 403;
}

/** The `dead` and `retrying` deliveries of every endpoint whose id the inbox does not hold; a reason when the log cannot be read. */
async function missedDeliveries(client: ReconcileClient, store: ReconcilableStore): Promise<MissedDelivery[] | string> {
  const failed: MissedDelivery[] = [];
  try {
    for (const endpoint of await client.webhooks.list()) {
      for (const delivery of await client.webhooks.deliveries(endpoint.id, { limit: DELIVERY_LOG_LIMIT })) {
        if (delivery.status !== 'dead' && delivery.status !== 'retrying') continue;
        failed.push({
          deliveryId: delivery.id,
          event: delivery.event,
          status: delivery.status,
          endpointId: endpoint.id,
          lastError: delivery.last_error,
          createdAt: delivery.created_at,
          attemptCount: delivery.attempt_count,
          givesUpAt: givesUpAt(delivery),
        });
      }
    }
  } catch (error) {
    if (!isScopeRefusal(error)) throw error;
    return 'the key cannot read the delivery log (webhooks:manage is needed for missed deliveries)';
  }
  if (failed.length === 0) return [];
  const known = await store.has(failed.map((each) => each.deliveryId));
  return failed.filter((each) => !known.has(each.deliveryId));
}

/**
 * When the service gives up on a retrying delivery: its next attempt, then the rest of the spec 6.4
 * schedule with each attempt failing at once (each may take up to the 10 s answer limit more).
 * Without `next_attempt_at`, from `created_at` and the whole schedule.
 */
export function givesUpAt(delivery: Pick<WebhookDelivery, 'status' | 'attempt_count' | 'created_at' | 'next_attempt_at'>): string | null {
  if (delivery.status !== 'retrying') return null;
  const next = delivery.next_attempt_at === null ? Number.NaN : Date.parse(delivery.next_attempt_at);
  const sum = (delays: number[]) => delays.reduce((total, seconds) => total + seconds * 1000, 0);
  const at = Number.isFinite(next) ? next + sum(RETRY_DELAYS_SECONDS.slice(Math.max(0, delivery.attempt_count))) : Date.parse(delivery.created_at) + sum(RETRY_DELAYS_SECONDS);
  return Number.isFinite(at) ? new Date(at).toISOString() : null;
}

/**
 * A delivery id made from content: the same change of the same order always gets the same id, so
 * a second reconcile (or two running at once) stores it once. UUID version 5 layout over SHA-1.
 */
export async function derivedDeliveryId(...parts: string[]): Promise<string> {
  const name = new TextEncoder().encode(['integration-sdk/inbox/reconcile', ...parts].join('\n'));
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-1', name)).slice(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = [...hash].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

async function createdEntry(order: Order, clock: Clock): Promise<NewInboxEntry> {
  const deliveryId = await derivedDeliveryId(order.order_id, 'order.created');
  const created = Math.floor(Date.parse(order.created_at) / 1000);
  const ts = Number.isFinite(created) ? created : Math.floor(clock.now() / 1000);
  return synthetic(deliveryId, 'order.created', order.order_id, ts, order, order.status, clock);
}

/** In the order's turn: after every event of it the inbox holds (by ts, then arrival). */
async function changeEntry(state: InboxOrderState, order: Order, clock: Clock): Promise<NewInboxEntry> {
  const previous = state.status ?? '';
  // The previous status is part of the id: an order that a late delivery moved back (an older change
  // arriving after the reconciled one) is corrected by the next reconcile, not taken as the same change.
  const deliveryId = await derivedDeliveryId(order.order_id, 'order.status_changed', previous, order.status);
  const ts = Math.max(Math.floor(clock.now() / 1000), state.statusTs);
  const { order_id, display_number, external_order_id, store_id, status } = order;
  const entry = synthetic(deliveryId, 'order.status_changed', order_id, ts, { order_id, display_number, external_order_id, previous_status: previous, status, store_id }, status, clock);
  // The store decides in its insert transaction, against what the order has had since this state.
  return state.version === undefined ? entry : { ...entry, orderVersion: state.version };
}

function synthetic(deliveryId: string, event: string, orderId: string, ts: number, data: unknown, status: string, clock: Clock): NewInboxEntry {
  return {
    deliveryId,
    event,
    orderId,
    ts,
    payload: JSON.stringify({ event, delivery_id: deliveryId, ts, data, source: 'reconcile' }),
    known: true,
    receivedAt: clock.now(),
    source: 'reconcile',
    orderStatus: status,
  };
}
