import { AuthenticationError } from '../errors/index.ts';
import { TenantNotFoundError } from '../errors/tenant-errors.ts';
import { removeEndpoint } from './connect.ts';
import { endpointUrl, keyClient, type TenantsContext } from './context.ts';
import { checkTenantId } from './tenant-id.ts';

/**
 * `tenants.disconnect(id)`: `disconnecting` is recorded first (its client stops sending), then every
 * endpoint of the tenant (those we hold a secret for, and any other at its URL) is deleted at the
 * service, then the key and secrets are erased and the tenant is `disconnected`. A failure leaves it
 * `disconnecting`, and a second call completes it; a disconnected tenant's is a no-op. With a key
 * the service refuses (revoked), nothing can be deleted there: the credentials are erased anyway,
 * and the warning says which endpoints remain.
 */
export async function disconnectTenant(context: TenantsContext, id: string): Promise<void> {
  checkTenantId(id);
  await context.credentials.ready();
  const { store, credentials, clock, clients, budget, logger } = context;
  const record = await store.get(id);
  if (record === null) throw new TenantNotFoundError(id, 'unknown');
  if (record.status === 'disconnected') return;
  await store.beginDisconnect(id, clock.now());
  clients.drop(id);
  const apiKey = credentials.openApiKey(record);
  if (apiKey !== null) {
    const client = keyClient(context, id, apiKey);
    const url = endpointUrl(context, id);
    try {
      const held = new Set((await store.secrets(id)).map((secret) => secret.endpointId));
      const endpoints = await client.webhooks.list();
      for (const endpoint of endpoints) {
        if (held.has(endpoint.id) || new URL(endpoint.url).href === url) await removeEndpoint(context, client, id, endpoint.id);
      }
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      logger?.warn?.('integration-sdk tenants: disconnecting a tenant whose key the service refuses: its endpoints could not be deleted there', { tenantId: id, endpointId: record.endpointId });
    }
  }
  await store.finishDisconnect(id, clock.now());
  budget.release(id);
}
