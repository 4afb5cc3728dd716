/**
 * `missed` (docs/inbox.md, Reconciliation): the deliveries of the inbox's own endpoints that the
 * service lists as `dead` or `retrying` and that never reached the inbox, kept from the reconcile
 * that first found them until they arrive, an operator acknowledges them, or (for a status change)
 * a reconcile has read back every order it could have been about.
 */
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../schemas/webhooks.ts';
import type { InboxStore, MissedDelivery, MissedRecord } from './store.ts';

/** What the delivery log is read through (an `IntegrationClient` fits; needs `webhooks:manage`). */
export interface DeliveryLogClient {
  webhooks: {
    list(): Promise<WebhookEndpoint[]>;
    deliveries(webhookId: string, options?: { limit?: number }): Promise<WebhookDelivery[]>;
  };
}

/** An endpoint of the key whose deliveries are not this inbox's: listed apart, never in `missed`. */
export interface OtherEndpoint {
  id: string;
  url: string;
  consecutiveFailures: number;
}

/** What a reading of the delivery log found. */
export interface DeliveryLog {
  /** The endpoints whose deliveries count as this inbox's. */
  endpointIds: string[];
  /** `true` when none were named: they are the endpoints with a delivery the inbox holds. */
  endpointsGuessed: boolean;
  otherEndpoints: OtherEndpoint[];
  /** Their `dead` and `retrying` deliveries (never `webhook.test`) whose id the inbox does not hold. */
  failed: MissedDelivery[];
}

/** Deliveries read per endpoint, newest first: the most the log lists. */
const DELIVERY_LOG_LIMIT = 100;
/** Spec 6.4: seconds the service waits after the failure of attempt 1, 2, 3, 4, 5; attempt 6 is the last. */
const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 43200];
/** More open misses than anyone reads; a bound for the one query that lists them. */
export const MAX_OPEN = 10_000;

function isScopeRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 403;
}

/**
 * Reads the delivery log of the inbox's endpoints: those named, else those with at least one
 * delivery the inbox holds. A reason instead when the key cannot read it (`webhooks:manage`).
 */
export async function readDeliveryLog(client: DeliveryLogClient, has: (ids: readonly string[]) => Promise<Set<string>>, named: readonly string[] | undefined): Promise<DeliveryLog | string> {
  const logs = new Map<string, WebhookDelivery[]>();
  let endpoints: WebhookEndpoint[];
  try {
    endpoints = await client.webhooks.list();
    for (const endpoint of endpoints) {
      if (named && !named.includes(endpoint.id)) continue;
      logs.set(endpoint.id, await client.webhooks.deliveries(endpoint.id, { limit: DELIVERY_LOG_LIMIT }));
    }
  } catch (error) {
    if (!isScopeRefusal(error)) throw error;
    return 'the key cannot read the delivery log (webhooks:manage is needed for missed deliveries)';
  }
  const all = [...logs.values()].flat();
  const held = all.length === 0 ? new Set<string>() : await has(all.map((delivery) => delivery.id));
  const endpointIds = named ? [...named] : [...logs].filter(([, deliveries]) => deliveries.some((delivery) => held.has(delivery.id))).map(([id]) => id);
  const failed: MissedDelivery[] = [];
  for (const id of endpointIds) {
    for (const delivery of logs.get(id) ?? []) {
      if ((delivery.status !== 'dead' && delivery.status !== 'retrying') || delivery.event === 'webhook.test' || held.has(delivery.id)) continue;
      failed.push({
        deliveryId: delivery.id,
        event: delivery.event,
        status: delivery.status,
        endpointId: id,
        lastError: delivery.last_error,
        createdAt: delivery.created_at,
        attemptCount: delivery.attempt_count,
        givesUpAt: givesUpAt(delivery),
      });
    }
  }
  const otherEndpoints = endpoints
    .filter((endpoint) => !endpointIds.includes(endpoint.id))
    .map((endpoint) => ({ id: endpoint.id, url: endpoint.url, consecutiveFailures: endpoint.consecutive_failures }));
  return { endpointIds, endpointsGuessed: !named, otherEndpoints, failed };
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

/** When a miss happened: the service's `created_at`, else when a reconcile first found it. */
export function missedAt(missed: MissedDelivery & { firstSeenAt?: number }): number {
  const at = Date.parse(missed.createdAt);
  return Number.isFinite(at) ? at : (missed.firstSeenAt ?? 0);
}

/**
 * The misses still open: those the store keeps (else those the last reconcile listed), without the
 * ones that have arrived since; of whatever endpoint, current or not (a miss ends only when it
 * arrives, is acknowledged or recovered). `undefined` before the first reconcile (or for a store
 * that keeps no reconciliation).
 */
export async function currentMissed(store: InboxStore, tenant?: string): Promise<MissedDelivery[] | undefined> {
  if (!store.lastReconcile || !store.has) return undefined;
  const last = await store.lastReconcile(tenant);
  if (!last) return undefined;
  const open = store.listMissed ? await store.listMissed({ open: true, limit: MAX_OPEN, tenant: tenant ?? '' }) : last.missed;
  if (open.length === 0) return [];
  const arrived = await store.has(open.map((each) => each.deliveryId), tenant ?? '');
  return open.filter((each) => !arrived.has(each.deliveryId));
}

/**
 * The misses still open of every tenant (an inbox given `tenants`): a tenant's reconcile keeps only
 * misses of that tenant's own endpoints, so none is left out. `undefined` for a store that keeps no misses.
 */
export async function everyTenantsMissed(store: InboxStore): Promise<MissedRecord[] | undefined> {
  if (!store.listMissed || !store.has) return undefined;
  const kept = await store.listMissed({ open: true, limit: MAX_OPEN });
  const open = kept.filter((each) => each.tenant !== undefined);
  if (open.length === 0) return [];
  const byTenant = new Map<string, MissedRecord[]>();
  for (const each of open) byTenant.set(each.tenant!, [...(byTenant.get(each.tenant!) ?? []), each]);
  const result: MissedRecord[] = [];
  for (const [tenant, misses] of byTenant) {
    const arrived = await store.has(misses.map((each) => each.deliveryId), tenant);
    result.push(...misses.filter((each) => !arrived.has(each.deliveryId)));
  }
  return result;
}

/** Ends the open misses whose delivery has reached the inbox since. */
export async function endArrived(store: InboxStore, open: readonly MissedDelivery[], now: number): Promise<MissedDelivery[]> {
  if (!store.endMissed || !store.has || open.length === 0) return [...open];
  const arrived = await store.has(open.map((each) => each.deliveryId));
  if (arrived.size > 0) await store.endMissed({ deliveryIds: [...arrived], how: 'arrived', at: now, by: null });
  return open.filter((each) => !arrived.has(each.deliveryId));
}

/**
 * Ends as `recovered` each open missed `order.status_changed` once every known non-final order
 * (the reconcile's own choice of orders to read) has been read back since it happened: whatever
 * order it was about has been read. A missed `order.created` is not: its order may be unknown.
 */
export async function endRecovered(store: InboxStore, open: readonly MissedDelivery[], finalStatuses: readonly string[], now: number): Promise<MissedDelivery[]> {
  if (!store.endMissed || !store.staleOrders) return [];
  const changes = open.filter((each) => each.event === 'order.status_changed').sort((a, b) => missedAt(a) - missedAt(b));
  const recovered: MissedDelivery[] = [];
  for (const missed of changes) {
    const unread = await store.staleOrders({ seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: missedAt(missed), finalStatuses, limit: 1 });
    // A later miss needs every order read since a later time: once one is not recovered, none after it is.
    if (unread.length > 0) break;
    recovered.push(missed);
  }
  if (recovered.length > 0) await store.endMissed({ deliveryIds: recovered.map((each) => each.deliveryId), how: 'recovered', at: now, by: null });
  return recovered;
}

/** `inbox.acknowledgeMissed`: ends open misses (one, or all) as acknowledged by `by`; how many. */
export async function acknowledgeMissed(store: InboxStore, deliveryId: string, by: string, now: number, tenant?: string): Promise<number> {
  if (typeof deliveryId !== 'string' || deliveryId === '') throw new InvalidInputError([{ path: 'deliveryId', message: "a delivery id, or 'all'" }]);
  if (typeof by !== 'string' || by === '') throw new InvalidInputError([{ path: 'by', message: 'who acknowledges it, as a non-empty string' }]);
  if (!store.endMissed) throw new InvalidInputError([{ path: 'store', message: 'this InboxStore keeps no missed deliveries: it lacks recordMissed, listMissed, endMissed (see InboxStore in integration-sdk/inbox)' }]);
  const ended = await store.endMissed({ deliveryIds: deliveryId === 'all' ? 'all' : [deliveryId], how: 'acknowledged', at: now, by, ...(tenant !== undefined && { tenant }) });
  return ended.length;
}

/** What to do about what a reconcile found, in sentences (the report's `advice`). */
export function missedAdvice(log: DeliveryLog, open: readonly MissedDelivery[]): string[] {
  const advice: string[] = [];
  if (log.endpointsGuessed) {
    advice.push(
      log.endpointIds.length === 0
        ? "No endpoint of the key could be told to be this inbox's (none has a delivery the inbox holds), so no delivery was counted as missed: name this inbox's endpoints with endpointIds (integration-sdk inbox reconcile --endpoint <id>)."
        : `Counted the deliveries of ${log.endpointIds.join(', ')}, guessed as this inbox's endpoints (they have deliveries the inbox holds); name them with endpointIds (--endpoint <id>) to be sure.`,
    );
  }
  const created = open.filter((each) => each.event === 'order.created');
  if (created.length > 0) {
    const times = created.map((each) => each.createdAt).sort();
    const when = times.length === 1 ? `at ${times[0]}` : `between ${times[0]} and ${times.at(-1)}`;
    advice.push(
      `${created.length} order.created ${created.length === 1 ? 'delivery' : 'deliveries'} never arrived (emitted ${when}): the inbox may not know those orders, and reading cannot find them (no route lists orders). Look for orders created at that time in the platform's dashboard, read each with client.orders.get (integration-sdk orders get <order_id>), then acknowledge the miss with inbox.acknowledgeMissed(deliveryId) (integration-sdk inbox reconcile --ack <delivery_id>).`,
    );
  }
  const changes = open.length - created.length;
  if (changes > 0) {
    advice.push(
      `${changes} missed status ${changes === 1 ? 'change is' : 'changes are'} not recovered yet: not every known non-final order has been read back since (the read budget, maxReads, ran out, or an order could not be read: see unreadable); run reconcile again, or acknowledge ${changes === 1 ? 'it' : 'them'} once dealt with.`,
    );
  }
  return advice;
}
