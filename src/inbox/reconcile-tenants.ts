/**
 * `inbox.reconcile({ tenants, maxReads })` for an inbox of many merchants: every active tenant's
 * stale orders and missed deliveries, within one shared budget of requests, least recently
 * reconciled tenant first, one report per tenant. Each tenant is reconciled as a single merchant's
 * inbox is (./reconcile.ts), through its own client and on a view of the store narrowed to it, with
 * its own endpoints (the registry's) counted for `missed`.
 */
import type { Clock } from '../clock.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { tenantsReceiving } from '../tenants/receiving.ts';
import type { Tenants } from '../tenants/types.ts';
import { errorText } from './error-text.ts';
import { reconcileStore, type ReconcileClient, type ReconcileOptions, type ReconcileReport } from './reconcile.ts';
import type { InboxStore, MissedDelivery } from './store.ts';

/** Options of `inbox.reconcile` for an inbox of many merchants. */
export interface TenantsReconcileOptions extends Omit<ReconcileOptions, 'client' | 'endpointIds' | 'maxReads'> {
  /** The tenants registry: its active tenants are reconciled, each through `tenants.client(id)`. */
  tenants: Tenants;
  /**
   * Requests this call may make, for all tenants together: order reads and each tenant's delivery
   * log reads (one list of its endpoints and one read per endpoint). A tenant is begun only when its
   * delivery log and at least one order read fit. @default 500
   */
  maxReads?: number;
}

/** One tenant's part of the report: what `reconcile` reports for a single merchant, and whose. */
export interface TenantReconcileReport extends ReconcileReport {
  tenant: string;
}

/** What `inbox.reconcile({ tenants })` did and found. */
export interface TenantsReconcileReport {
  /** The tenants reconciled in this call, in the order they were (least recently reconciled first). */
  tenants: TenantReconcileReport[];
  /** Active tenants left for the next call: the budget ran out before them (they go first then). */
  notReached: number;
  /** Requests made, of `maxReads`. */
  reads: number;
  /** Every reconciled tenant's open misses, each with its tenant. */
  missed: Array<MissedDelivery & { tenant: string }>;
  /**
   * Tenants whose reconcile stopped on an error (the service answered 500 for one of its orders,
   * its key was refused): each with the error's text. The others went on; a failed tenant's run is
   * saved as when it ran, so that it takes its turn after the others next time, not first for ever.
   */
  failed: TenantReconcileFailure[];
}

/** A tenant whose reconcile stopped on an error, in `TenantsReconcileReport.failed`. */
export interface TenantReconcileFailure {
  tenant: string;
  /** The error's class and message, without personal data (as a handler's `lastError`). */
  error: string;
}

export interface TenantsReconcileDeps {
  clock: Clock;
  onStored?: () => void;
}

/** The store, seen as one tenant's inbox: every call a reconcile makes is narrowed to `tenant`. */
export function tenantView(store: InboxStore, tenant: string): InboxStore {
  return {
    ...store,
    insert: (entry, options) => store.insert({ ...entry, tenant }, options),
    get: (deliveryId) => store.get(deliveryId, tenant),
    orderCreatedPayload: (orderId) => store.orderCreatedPayload(orderId, tenant),
    ...(store.staleOrders && { staleOrders: (request) => store.staleOrders!({ ...request, tenant }) }),
    ...(store.markChecked && { markChecked: (checks, now) => store.markChecked!(checks, now, tenant) }),
    ...(store.has && { has: (ids) => store.has!(ids, tenant) }),
    ...(store.saveReconcile && { saveReconcile: (record) => store.saveReconcile!({ ...record, tenant }) }),
    ...(store.lastReconcile && { lastReconcile: () => store.lastReconcile!(tenant) }),
    ...(store.recordMissed && { recordMissed: (missed, now) => store.recordMissed!(missed, now, tenant) }),
    ...(store.listMissed && { listMissed: (request) => store.listMissed!({ ...request, tenant }) }),
    ...(store.endMissed && { endMissed: (request) => store.endMissed!({ ...request, tenant }) }),
  };
}

/** A client that counts the requests reconcile makes through it. */
function counting(client: ReconcileClient, count: () => void): ReconcileClient {
  return {
    orders: { get: (orderId) => (count(), client.orders.get(orderId)) },
    webhooks: {
      list: () => (count(), client.webhooks.list()),
      deliveries: (webhookId, options) => (count(), client.webhooks.deliveries(webhookId, options)),
    },
  };
}

export async function reconcileTenants(store: InboxStore, options: TenantsReconcileOptions, deps: TenantsReconcileDeps): Promise<TenantsReconcileReport> {
  const receiving = tenantsReceiving(options?.tenants);
  if (!receiving) throw new ConfigurationError('reconcile: tenants must be the registry createTenants(...) from integration-sdk/tenants returns.');
  const maxReads = options.maxReads ?? 500;
  if (!Number.isSafeInteger(maxReads) || maxReads < 0) throw new InvalidInputError([{ path: 'maxReads', message: 'must be a whole number >= 0' }]);
  if (!store.reconciledAt) throw new InvalidInputError([{ path: 'store', message: 'this InboxStore cannot reconcile many tenants: it lacks reconciledAt (see InboxStore in integration-sdk/inbox)' }]);
  const { tenants, ...rest } = options;

  const active: string[] = [];
  for await (const tenant of tenants.list({ status: 'active' })) active.push(tenant.id);
  const ranAt = await store.reconciledAt(active);
  // Never reconciled first (in id order), then the least recently reconciled.
  const order = active
    .map((id, index) => ({ id, index, at: ranAt.get(id) ?? -Infinity }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map((each) => each.id);

  const report: TenantsReconcileReport = { tenants: [], notReached: 0, reads: 0, missed: [], failed: [] };
  for (const [position, tenant] of order.entries()) {
    const state = await receiving.read(tenant);
    if (state === null) continue; // disconnected since it was listed
    const endpointIds = [...new Set(state.secrets.map((secret) => secret.endpointId))];
    const logReads = 1 + endpointIds.length;
    const left = maxReads - report.reads;
    if (left < logReads + 1) {
      report.notReached = order.length - position;
      break;
    }
    let reads = 0;
    const client = counting(tenants.client(tenant), () => (reads += 1));
    const view = tenantView(store, tenant);
    try {
      const tenantReport = await reconcileStore(view, { ...rest, client, maxReads: left - logReads, ...(endpointIds.length > 0 && { endpointIds }) }, { clock: deps.clock, onStored: deps.onStored });
      report.tenants.push({ tenant, ...tenantReport });
      report.missed.push(...tenantReport.missed.map((missed) => ({ ...missed, tenant })));
    } catch (error) {
      // One tenant's failure is its own: reported, its turn taken, and the others go on.
      report.failed.push({ tenant, error: errorText(error, null) });
      await saveFailedRun(view, deps.clock.now(), endpointIds);
    } finally {
      report.reads += reads;
    }
  }
  return report;
}

/**
 * Records a failed tenant's run as when it ran, with the misses the last run left open (what it
 * found before failing is kept by `recordMissed` already), so that it is not the least recently
 * reconciled tenant for ever.
 */
async function saveFailedRun(view: InboxStore, now: number, endpointIds: readonly string[]): Promise<void> {
  const last = await view.lastReconcile?.();
  await view.saveReconcile?.({ ranAt: now, missed: last?.missed ?? [], endpointIds: [...(last?.endpointIds ?? endpointIds)] });
}
