import type { Scope } from '../schemas/health.ts';
import type { TenantRecord } from './store.ts';
import type { Tenant } from './types.ts';

/** The six scopes of spec part 5. */
export const ALL_SCOPES: readonly Scope[] = ['catalog:write', 'stock:write', 'orders:read', 'webhooks:manage', 'loyalty:read', 'loyalty:write'];

/** The scopes the integration cannot work without: registering its endpoint, and reconciling orders. */
export const REQUIRED_SCOPES: readonly Scope[] = ['webhooks:manage', 'orders:read'];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The public view of a stored tenant: no sealed value, no key generation. */
export function tenantFromRecord(record: TenantRecord): Tenant {
  return {
    id: record.id,
    merchantId: record.merchantId,
    storeIds: [...record.storeIds],
    scopes: [...record.scopes],
    missingScopes: ALL_SCOPES.filter((scope) => !record.scopes.includes(scope)),
    endpointId: record.endpointId,
    status: record.status,
    connectedAt: iso(record.connectedAt),
    keyInvalidAt: iso(record.keyInvalidAt),
    disconnectedAt: iso(record.disconnectedAt),
  };
}
