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

/**
 * How far back a copy's original may have arrived: the service retries a delivery for about
 * 14 h 36 min (spec 6.4), so one endpoint's delivery may reach the inbox that much after the other's.
 */
export const PAIR_WINDOW_MS = 86_400_000;

/**
 * How long before a secret began to verify deliveries a copy's original may have arrived: the
 * service may deliver through a new endpoint before its secret is stored (a tenant's rotation holds
 * such a delivery up to `HOLD_MS`, 5 s, in src/inbox/authenticate.ts, and refuses it after), and of
 * two copies sent at once either may arrive first. Short: a delivery the older endpoint made before
 * the newer one existed is nobody's copy, and must not take a later real repeat of its transition
 * for one.
 */
export const PAIR_SLACK_MS = 5000;

/**
 * The earliest `receivedAt` of a copy's original, for a delivery verified by a secret that began
 * at `since` (a tenant's: when the registry stored it; a single merchant's: when it first verified
 * an order event, as the store keeps it), and within the service's retry window.
 */
export function pairAfterOf(since: number, receivedAt: number): number {
  return Math.max(receivedAt - PAIR_WINDOW_MS, since - PAIR_SLACK_MS);
}
