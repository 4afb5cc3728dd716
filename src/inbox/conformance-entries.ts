// What the InboxStore conformance suite's parts share: the times they use and the entries they store.
import type { InboxOrderState, InboxStore, NewInboxEntry } from './store.ts';

export const T0 = 1_800_000_000_000;
export const LEASE = 60_000;
export const WAIT = 600_000;

let counter = 0;

/** A new `order.created` of its own order, received at T0, with `overrides`. */
export function entry(overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  counter += 1;
  return {
    deliveryId: `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    event: 'order.created',
    orderId: `order-${counter}`,
    ts: 1_800_000_000,
    payload: JSON.stringify({ event: 'order.created', data: { order_id: `order-${counter}` } }),
    known: true,
    receivedAt: T0,
    ...overrides,
  };
}

/** An order event of `orderId` whose `data` holds `status` (and, for a change, `previous_status`): what the order's state reads. */
export function orderEntry(orderId: string, event: string, data: Record<string, string>, overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  return entry({ orderId, event, payload: JSON.stringify({ event, data: { order_id: orderId, ...data } }), ...overrides });
}

/** A real `order.status_changed` of `orderId` from `previous` to `status`. */
export function statusChange(orderId: string, previous: string, status: string, overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  return orderEntry(orderId, 'order.status_changed', { previous_status: previous, status }, { ts: 300, ...overrides });
}

/** A reconcile entry of `orderId` from `previous` (the state read, at `orderVersion`) to `status` (what the service said). */
export function reconciledChange(orderId: string, previous: string, status: string, orderVersion: number | undefined, overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  return statusChange(orderId, previous, status, { source: 'reconcile', ts: 200, ...(orderVersion === undefined ? {} : { orderVersion }), ...overrides });
}

/** The store's state of one order (of `tenant`), as `staleOrders` lists it. */
export async function orderStateOf(store: InboxStore, orderId: string, tenant?: string): Promise<InboxOrderState | undefined> {
  const states = await store.staleOrders!({ tenant, seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: Number.MAX_SAFE_INTEGER, finalStatuses: [], limit: 1000 });
  return states.find((state) => state.orderId === orderId);
}

/** Stored `done` without ever being claimed: covered, or a copy. */
export async function neverRuns(store: InboxStore, deliveryId: string, tenant?: string): Promise<boolean> {
  const stored = await store.get(deliveryId, tenant);
  return stored?.status === 'done' && stored.attempts === 0;
}

/** Runs the store's claims to the end, as a worker would: the delivery ids run, in order. */
export async function runToEnd(store: InboxStore): Promise<string[]> {
  const ran: string[] = [];
  for (let round = 0; round < 50; round += 1) {
    const claimed = await store.claim({ workerId: 'w', now: T0 + WAIT * 2, leaseMs: LEASE, limit: 100, orderWaitMs: WAIT });
    if (claimed.length === 0) return ran;
    for (const each of claimed) {
      ran.push(each.id);
      await store.complete(each.id, 'w', T0 + WAIT * 2, each.tenant);
    }
  }
  return ran;
}
