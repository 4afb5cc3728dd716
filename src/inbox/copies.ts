/**
 * Copies across two secrets (docs/inbox.md, "Two secrets: copies run once"). While two endpoints
 * deliver to one inbox (a secret rotation's overlap, or one URL registered twice), every order
 * event arrives once through each, with two delivery ids. The receiver keeps which secret verified
 * each delivery (`verifiedBy`, an opaque id), and the store pairs, in its insert transaction, an
 * order event with an unpaired one of the same tenant, order and change verified by another secret:
 * the later of the two is stored as its copy, `done`, never run. Both stay for the audit.
 *
 * The change is what the pair key names: `order.created`, or `order.status_changed` with its
 * `previous_status` and `status`. Nothing else (not `ts`, which the service stamps per attempt).
 */
import { statusesOf } from './order-history.ts';

const ORDER_EVENTS = ['order.created', 'order.status_changed'];

/** What the pairing reads of an entry being stored (a `NewInboxEntry`'s fields of the same names). */
export interface PairedEntry {
  event: string;
  orderId: string | null;
  payload: string;
  verifiedBy?: string | null | undefined;
}

/** The change an order event carries, as the pairing compares it; `null` for an entry never paired (no secret id, not an order event). */
export function pairKeyOf(entry: PairedEntry): string | null {
  if (!entry.verifiedBy || entry.orderId === null || !ORDER_EVENTS.includes(entry.event)) return null;
  if (entry.event === 'order.created') return entry.event;
  const { status, previousStatus } = statusesOf(entry.payload);
  return JSON.stringify([entry.event, previousStatus, status]);
}
