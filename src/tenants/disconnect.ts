import { AuthenticationError } from '../errors/index.ts';
import { TenantNotFoundError } from '../errors/tenant-errors.ts';
import { endpointUrl, keyClient, type TenantsContext } from './context.ts';
import { deleteKeyEndpoints } from './endpoints.ts';
import { tenantFromRecord } from './records.ts';
import { RotationLease } from './rotation-lease.ts';
import type { TenantRecord, TenantRotationRecord } from './store.ts';
import type { DisconnectResult } from './types.ts';
import { checkTenantId } from './tenant-id.ts';

/**
 * `tenants.disconnect(id)`: `disconnecting` is recorded first (its client stops sending), then every
 * endpoint of the tenant is deleted at the service with each key that may own one (endpoints belong
 * to the key that registered them): its key, and the old key of a key change that did not finish.
 * Then the key and secrets are erased and the tenant is `disconnected`. A failure leaves it
 * `disconnecting`, and a second call completes it; a disconnected tenant's is a no-op.
 *
 * A key known refused (`key_invalid`) is never sent: its endpoints deliver nothing (the merchant's
 * revoked key took them out of service) and cannot be deleted with it. They are named in
 * `endpointsLeft` and told to the logger, and the credentials are erased anyway; so for a key the
 * service refuses now. Everything that needs configuration (the webhook URL) is checked before
 * anything is recorded; a rotation another live call runs is refused (`in_progress`) first.
 */
export async function disconnectTenant(context: TenantsContext, id: string): Promise<DisconnectResult> {
  checkTenantId(id);
  await context.credentials.ready();
  const record = await context.store.get(id);
  if (record === null) throw new TenantNotFoundError(id, 'unknown');
  if (record.status === 'disconnected') return { tenant: tenantFromRecord(record), endpointsLeft: [] };
  const lease = new RotationLease(context.store, context.clock, id);
  const rotation = await lease.claim();
  // A failure gives the rotation up, so that a second disconnect (from any process) completes at once.
  return lease.hold(() => disconnectOwned(context, record, rotation));
}

/** The disconnect itself, the tenant's rotation (if any) owned by this call. */
async function disconnectOwned(context: TenantsContext, record: TenantRecord, rotation: TenantRotationRecord | null): Promise<DisconnectResult> {
  const { store, credentials, clock, clients, budget, logger } = context;
  const { id } = record;
  const keyChange = rotation?.kind === 'key' ? rotation : null;
  // The keys that may own an endpoint of the tenant; `null` for one known refused, never sent.
  const keys = [
    record.status === 'key_invalid' ? null : credentials.openApiKey(record),
    ...(keyChange ? [keyChange.retiringKey === null ? null : credentials.openApiKey({ id, apiKey: keyChange.retiringKey })] : []),
  ];
  const url = keys.some((key) => key !== null) ? endpointUrl(context, id) : '';
  const known = new Set([...(await store.secrets(id)).map((secret) => secret.endpointId), record.endpointId, keyChange?.oldEndpointId, rotation?.newEndpointId]);

  await store.beginDisconnect(id, clock.now());
  clients.drop(id);
  const deleted = new Set<string>();
  let everyKeyListed = true;
  for (const [index, apiKey] of keys.entries()) {
    if (apiKey === null) {
      everyKeyListed = false;
      continue;
    }
    const line = index === 0 ? id : `${id}/retiring`;
    try {
      for (const endpointId of await deleteKeyEndpoints(context, keyClient(context, id, apiKey, line), id, url, null)) deleted.add(endpointId);
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      everyKeyListed = false;
    } finally {
      if (line !== id) budget.release(line);
    }
  }
  // A held secret no key listed is of an endpoint gone already, unless a key could not list its own.
  const endpointsLeft = everyKeyListed ? [] : [...known].filter((endpointId): endpointId is string => typeof endpointId === 'string' && endpointId !== '' && !deleted.has(endpointId));
  if (endpointsLeft.length > 0) {
    logger?.warn?.(
      "integration-sdk tenants: disconnected a tenant whose key the service refuses (401): these endpoints could not be deleted; the revoked key took them out of service (if the platform still lists them, delete them with a valid key of the merchant)",
      { tenantId: id, endpointIds: endpointsLeft },
    );
  }
  const done = await store.finishDisconnect(id, clock.now());
  budget.release(id);
  return { tenant: tenantFromRecord(done ?? (await store.get(id))!), endpointsLeft };
}
