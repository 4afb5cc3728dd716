/**
 * The steps of a key change (a rotation of `kind: 'key'`: `updateKey`, or `connect` with another
 * key) that differ from a secret rotation's. Endpoints belong to the key that registered them (spec
 * 4.5), and a revoked key's endpoints deliver nothing, so the tenant keeps receiving only if its new
 * key has an endpoint at its URL:
 *
 * - registering: the new key's endpoint at the URL is found (secret held) or registered, its secret
 *   stored at once; the old key's endpoint keeps delivering meanwhile, both secrets are held, and the
 *   inbox runs each event once whichever endpoint brought it first;
 * - retiring (after the new endpoint's `webhooks.test`): the old key's endpoints are deleted with the
 *   old key (a 401: that key is gone, and its endpoints with it as far as deliveries go; a key already
 *   known refused is never sent), then, a moment later, every secret but the new endpoint's is dropped.
 */
import { sleep } from '../clock.ts';
import { AuthenticationError } from '../errors/index.ts';
import { endpointUrl, keyClient, type TenantsContext } from './context.ts';
import { deleteAtService, deleteKeyEndpoints, ensureEndpoint, RETIRE_GRACE_MS } from './endpoints.ts';
import type { TenantRotationRecord } from './store.ts';

/** Registering: the tenant's endpoint under its (new) key; endpoints of that key with other events go once it exists. */
export async function registerUnderNewKey(context: TenantsContext, id: string): Promise<string> {
  const client = context.clientOf(id);
  const endpoint = await ensureEndpoint(context, client, id, endpointUrl(context, id), null, false);
  // Their secrets stay until the retiring step: an attempt already sent is still verified.
  for (const endpointId of endpoint.stale) await deleteAtService(client, endpointId);
  return endpoint.id;
}

/** Retiring: the old key's endpoints deleted with the old key, then every secret but the new endpoint's dropped. */
export async function retireOldKey(context: TenantsContext, id: string, rotation: TenantRotationRecord, newEndpointId: string): Promise<void> {
  const { store, credentials, logger, budget } = context;
  if (rotation.retiringKey === null) {
    if (rotation.oldEndpointId !== '') {
      logger?.warn?.(
        "integration-sdk tenants: the tenant's old key was refused (401) before its endpoint could be deleted; the revoked key took it out of service (if the platform still lists it, delete it with a valid key of the merchant)",
        { tenantId: id, endpointId: rotation.oldEndpointId },
      );
    }
  } else {
    const oldKey = credentials.openApiKey({ id, apiKey: rotation.retiringKey })!;
    // The old key's own line in the budget: the tenant's line stays on its new key's bucket.
    const line = `${id}/retiring`;
    try {
      await deleteKeyEndpoints(context, keyClient(context, id, oldKey, line), id, endpointUrl(context, id), newEndpointId);
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      logger?.warn?.("integration-sdk tenants: the tenant's old key was refused (401): its endpoints deliver nothing and could not be deleted", { tenantId: id, endpointId: rotation.oldEndpointId });
    } finally {
      budget.release(line);
    }
  }
  await sleep(context.clock, RETIRE_GRACE_MS);
  for (const secret of await store.secrets(id)) if (secret.endpointId !== newEndpointId) await store.deleteSecret(id, secret.endpointId);
}
