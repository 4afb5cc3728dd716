/**
 * The entries a reconcile stores for what it read back: a synthetic `order.created` for an order
 * known only from status changes, a synthetic `order.status_changed` where the service's status
 * differs from the inbox's. Both carry `source: 'reconcile'` and a delivery id derived from their
 * content (a change's: from the state it was read from too), so that the same finding is stored once.
 */
import type { Clock } from '../clock.ts';
import type { Order } from '../schemas/order.ts';
import type { InboxOrderState, NewInboxEntry } from './store.ts';

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

export async function createdEntry(order: Order, clock: Clock): Promise<NewInboxEntry> {
  const deliveryId = await derivedDeliveryId(order.order_id, 'order.created');
  const created = Math.floor(Date.parse(order.created_at) / 1000);
  const ts = Number.isFinite(created) ? created : Math.floor(clock.now() / 1000);
  return synthetic(deliveryId, 'order.created', order.order_id, ts, order, order.status, clock);
}

/** In the order's turn: after every event of it the inbox holds (by ts, then arrival). */
export async function changeEntry(state: InboxOrderState, order: Order, clock: Clock): Promise<NewInboxEntry> {
  const previous = state.status ?? '';
  // The state read is part of the id: two reconciles reading the same state store its change once,
  // and the same transition missed again later (the order really went back) is a change of its own.
  // A store that keeps no version names the state by when the order's last event arrived.
  const read = state.version === undefined ? `at ${state.lastEventAt}` : `version ${state.version}`;
  const deliveryId = await derivedDeliveryId(order.order_id, 'order.status_changed', previous, order.status, read);
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
