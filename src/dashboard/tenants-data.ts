// What the Tenants page shows, a page of tenants at a time: `key_invalid` ones first (they need a
// person: ask the merchant for a key), then the others in id order by keyset. Per tenant: its
// status, its endpoint's health at the service, its last order and its pending and dead entries.
// Never a key or a secret: rows are the registry's public `Tenant` records.
import { IntegrationError } from '../errors/integration-error.ts';
import { tenantsInternals } from '../tenants/create-tenants.ts';
import { tenantFromRecord } from '../tenants/records.ts';
import type { TenantStatus } from '../tenants/store.ts';
import type { Tenant, Tenants } from '../tenants/types.ts';
import { describeError, type DashboardStore } from './data.ts';

/** Tenants per page (each costs one `webhooks.list` of its key, at most once a minute). */
export const TENANTS_PAGE = 25;
/** At most this many `key_invalid` tenants are listed first (the count says how many there are). */
const KEY_INVALID_LISTED = 200;
/** An endpoint's health is read again after this long. */
export const ENDPOINT_HEALTH_TTL_MS = 60_000;
const SERVICE_TIMEOUT_MS = 5000;
const OTHERS: TenantStatus[] = ['connecting', 'active', 'disconnecting'];

/** The tenant's endpoint as the service last described it. */
export type EndpointHealth =
  | { state: 'ok' | 'failing'; consecutiveFailures: number; checkedAt: number }
  /** The service has no endpoint with the tenant's `endpointId`. */
  | { state: 'missing'; checkedAt: number }
  /** Not asked: the key is refused, or the tenant has no endpoint yet or is going. */
  | { state: 'unchecked'; why: string }
  | { state: 'error'; detail: string; checkedAt: number };

export interface TenantRow {
  tenant: Tenant;
  endpoint: EndpointHealth;
  /** When its latest `order.created` reached the inbox. */
  lastOrderAt: number | null;
  pending: number;
  dead: number;
}

export interface TenantsView {
  /** `key_invalid` tenants (first page only), then the page's others. */
  rows: TenantRow[];
  keyInvalid: number;
  /** The id the next page starts after, when there may be one. */
  next: string | null;
}

export function createTenantsReader(tenants: Tenants, source: DashboardStore) {
  const internals = tenantsInternals(tenants)!;
  // Bounded by what pages show: one entry per tenant listed, dropped once stale.
  const health = new Map<string, Extract<EndpointHealth, { checkedAt: number }>>();

  async function endpointHealth(tenant: Tenant, now: number): Promise<EndpointHealth> {
    if (tenant.status === 'key_invalid') return { state: 'unchecked', why: 'its key is refused' };
    if (tenant.status !== 'active' || tenant.endpointId === null) return { state: 'unchecked', why: tenant.status === 'connecting' ? 'still connecting' : 'disconnecting' };
    const known = health.get(tenant.id);
    if (known && now - known.checkedAt < ENDPOINT_HEALTH_TTL_MS) return known;
    let found: Extract<EndpointHealth, { checkedAt: number }>;
    try {
      // Through the tenant's own client: its key bucket and the shared egress budget.
      const endpoints = await tenants.client(tenant.id).webhooks.list({ signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS) });
      const endpoint = endpoints.find((each) => each.id === tenant.endpointId);
      found = endpoint
        ? { state: endpoint.consecutive_failures > 0 ? 'failing' : 'ok', consecutiveFailures: endpoint.consecutive_failures, checkedAt: now }
        : { state: 'missing', checkedAt: now };
    } catch (error) {
      found = { state: 'error', detail: error instanceof IntegrationError ? describeError(error) : 'the service could not be asked', checkedAt: now };
    }
    health.set(tenant.id, found);
    for (const [id, entry] of health) if (now - entry.checkedAt >= ENDPOINT_HEALTH_TTL_MS) health.delete(id);
    return found;
  }

  async function rowOf(tenant: Tenant, now: number): Promise<TenantRow> {
    const [endpoint, stats, [lastOrder]] = await Promise.all([
      endpointHealth(tenant, now),
      source.store.stats(now, { tenant: tenant.id }),
      source.store.page!({ tenant: tenant.id, event: 'order.created', limit: 1 }),
    ]);
    return { tenant, endpoint, lastOrderAt: lastOrder?.receivedAt ?? null, pending: stats.pending, dead: stats.dead };
  }

  return {
    async read(after: string | undefined): Promise<TenantsView> {
      await source.ready();
      const now = source.clock.now();
      const [invalid, counts, others] = await Promise.all([
        after === undefined ? internals.store.list({ statuses: ['key_invalid'], limit: KEY_INVALID_LISTED }) : [],
        internals.store.countByStatus(),
        internals.store.list({ statuses: OTHERS, after, limit: TENANTS_PAGE + 1 }),
      ]);
      const page = others.slice(0, TENANTS_PAGE);
      const rows = await Promise.all([...invalid, ...page].map((record) => rowOf(tenantFromRecord(record), now)));
      return { rows, keyInvalid: counts.key_invalid ?? 0, next: others.length > TENANTS_PAGE ? page.at(-1)!.id : null };
    },
  };
}
