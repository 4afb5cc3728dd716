import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { TenantConnectError, TenantNotFoundError } from '../errors/tenant-errors.ts';
import { connectWithKey, refuseKnownInvalidKey } from './connect.ts';
import { describeKey, endpointUrl, keyClient, type TenantsContext } from './context.ts';
import { checkTenantId } from './tenant-id.ts';
import type { Tenant } from './types.ts';

/**
 * `tenants.updateKey(id, apiKey)`: the merchant's new key, checked (`health()`: the same merchant,
 * the scopes the integration needs) before anything is stored, then the key change `connect` with
 * another key makes too (`./key-change.ts`): the new key stored (a `key_invalid` tenant is `active`
 * again, every process's client sends with it from its next call), the tenant's endpoint registered
 * under the new key (endpoints belong to the key that registered them) and tested, the old key's
 * endpoint deleted with the old key, then its secret dropped. A second call completes one that stopped.
 */
export async function updateTenantKey(context: TenantsContext, id: string, apiKey: string): Promise<Tenant> {
  checkTenantId(id);
  const client = keyClient(context, id, apiKey);
  endpointUrl(context, id);
  await context.credentials.ready();
  const record = await context.store.get(id);
  if (record === null) throw new TenantNotFoundError(id, 'unknown');
  if (record.status === 'disconnected' || record.status === 'disconnecting') throw new TenantNotFoundError(id, 'disconnected');
  if (record.connectedAt === null) {
    throw new InvalidInputError([{ path: 'tenantId', message: 'has not finished connecting: call tenants.connect(id, { apiKey }) with the new key to complete it' }]);
  }
  refuseKnownInvalidKey(context, record, apiKey);
  const health = await describeKey(id, client);
  if (health.merchant_id !== record.merchantId) {
    throw new TenantConnectError(id, 'merchant_mismatch', `the new key belongs to merchant ${health.merchant_id}, not to the tenant's merchant ${record.merchantId}; nothing was stored`);
  }
  return connectWithKey(context, id, { apiKey, allowSameMerchant: record.allowSameMerchant }, health, client);
}
