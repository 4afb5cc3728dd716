import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { TenantConnectError, TenantNotFoundError } from '../errors/tenant-errors.ts';
import { describeKey, keyClient, type TenantsContext } from './context.ts';
import { tenantFromRecord } from './records.ts';
import { checkTenantId } from './tenant-id.ts';
import type { Tenant } from './types.ts';

/**
 * `tenants.updateKey(id, apiKey)`: the merchant's new key, checked (`health()`: the same merchant,
 * the scopes the integration needs) before it replaces the stored one. A `key_invalid` tenant is
 * `active` again; every process's client of the tenant sends with the new key from its next call.
 */
export async function updateTenantKey(context: TenantsContext, id: string, apiKey: string): Promise<Tenant> {
  checkTenantId(id);
  const client = keyClient(context, id, apiKey);
  await context.credentials.ready();
  const record = await context.store.get(id);
  if (record === null) throw new TenantNotFoundError(id, 'unknown');
  if (record.status === 'disconnected' || record.status === 'disconnecting') throw new TenantNotFoundError(id, 'disconnected');
  if (record.status === 'connecting') {
    throw new InvalidInputError([{ path: 'tenantId', message: 'has not finished connecting: call tenants.connect(id, { apiKey }) with the new key to complete it' }]);
  }
  const health = await describeKey(id, client);
  if (health.merchant_id !== record.merchantId) {
    throw new TenantConnectError(id, 'merchant_mismatch', `the new key belongs to merchant ${health.merchant_id}, not to the tenant's merchant ${record.merchantId}; nothing was stored`);
  }
  const replaced = await context.store.replaceKey({ id, apiKey: context.credentials.sealApiKey(id, apiKey), scopes: [...health.scopes], storeIds: [...health.store_ids], at: context.clock.now() });
  if (replaced === null) throw new TenantNotFoundError(id, 'disconnected');
  return tenantFromRecord(replaced);
}
