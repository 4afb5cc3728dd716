// What the InboxStore conformance suite's parts share: the times they use and the entries they store.
import type { NewInboxEntry } from './store.ts';

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
