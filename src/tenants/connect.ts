/**
 * `tenants.connect(id, { apiKey })`, and the part `updateKey` shares with it. Every step is recorded
 * before the next external one, and every step can be done again, so that a second call completes
 * one that failed or whose process died:
 *
 * 1. checks (id, key shape, webhook URL, a disconnect not finished, the key the tenant met its 401
 *    with, `health()`, scopes) write nothing;
 * 2. the intent is stored: the sealed key, the merchant, `connecting` for a new tenant (the merchant
 *    rule checked in the same transaction). Another key for a tenant that has one begins a key
 *    change instead (the same path as `updateKey`: `./key-change.ts`, run by `./rotate.ts`);
 * 3. the endpoint (`./endpoints.ts`): the key's endpoints at `webhookUrl(id)` are matched with the
 *    secrets we hold; one we hold no secret for is deleted; one we hold is reused; else one is
 *    registered and its secret stored at once; one whose events changed goes once its replacement exists;
 * 4. `webhooks.test` to it (on failure, an endpoint registered by this call is deleted);
 * 5. the tenant becomes `active`.
 */
import type { IntegrationClient } from '../client.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { TenantConnectError, TenantKeyInvalidError } from '../errors/tenant-errors.ts';
import type { Health } from '../schemas/health.ts';
import { describeKey, endpointUrl, keyClient, type TenantsContext } from './context.ts';
import { ensureEndpoint, removeEndpoint, retireEndpoints } from './endpoints.ts';
import { tenantFromRecord } from './records.ts';
import { runRotation } from './rotate.ts';
import { RotationLease, rotationInProgress } from './rotation-lease.ts';
import type { ConnectIntentResult, TenantRecord } from './store.ts';
import { checkTenantId } from './tenant-id.ts';
import type { ConnectInput, Tenant } from './types.ts';

export async function connectTenant(context: TenantsContext, id: string, input: ConnectInput): Promise<Tenant> {
  checkTenantId(id);
  if (input?.allowSameMerchant !== undefined && typeof input.allowSameMerchant !== 'boolean') {
    throw new InvalidInputError([{ path: 'allowSameMerchant', message: 'must be true or false' }]);
  }
  const client = keyClient(context, id, input?.apiKey);
  endpointUrl(context, id);
  await context.credentials.ready();
  const existing = await context.store.get(id);
  refuseWhileDisconnecting(id, existing?.status);
  refuseKnownInvalidKey(context, existing, input.apiKey);
  const health = await describeKey(id, client);
  return connectWithKey(context, id, { apiKey: input.apiKey, allowSameMerchant: input.allowSameMerchant === true }, health, client);
}

/** Step 1's refusal of a tenant whose disconnect did not finish: nothing is sent or written. */
export function refuseWhileDisconnecting(id: string, status: string | undefined): void {
  if (status !== 'disconnecting') return;
  throw new TenantConnectError(
    id,
    'disconnecting',
    `a disconnect of this tenant began and did not finish: call tenants.disconnect(${JSON.stringify(id)}) to complete it (its endpoints deleted, credentials erased), then connect it; nothing was sent or stored`,
  );
}

/**
 * Step 1's refusal of the very key the tenant met its 401 with (`key_invalid`): it is not sent
 * again, not even for `health()`; the merchant has to give a new key.
 */
export function refuseKnownInvalidKey(context: TenantsContext, record: TenantRecord | null, apiKey: string): void {
  if (record?.status !== 'key_invalid' || record.apiKey === null) return;
  if (context.credentials.openApiKey(record) !== apiKey) return;
  throw new TenantKeyInvalidError(record.id, tenantFromRecord(record).keyInvalidAt);
}

/**
 * Steps 2 to 5 for a key `health()` described: the intent stored, then either the first endpoint
 * (a new tenant, or the same key) or a key change (another key for a tenant that has one).
 */
export async function connectWithKey(context: TenantsContext, id: string, input: Required<ConnectInput>, health: Health, client: IntegrationClient): Promise<Tenant> {
  const lease = new RotationLease(context.store, context.clock, id);
  const begun = await storeIntent(context, id, input, health, lease);
  if (begun.rotation !== null) return runRotation(context, id, begun.rotation, lease);

  const { store, clock } = context;
  const endpoint = await ensureEndpoint(context, client, id, endpointUrl(context, id), begun.record.endpointId, true);
  try {
    await client.webhooks.test(endpoint.id);
  } catch (error) {
    if (endpoint.registeredNow) await removeEndpoint(context, client, id, endpoint.id).catch(() => {});
    throw error;
  }
  const done = await store.finishConnect(id, endpoint.id, clock.now());
  if (done === null) throw new InvalidInputError([{ path: 'tenantId', message: 'was disconnected while it was being connected' }]);
  await retireEndpoints(context, client, id, endpoint.stale);
  return tenantFromRecord(done);
}

/**
 * Step 2: `beginConnect`, after completing an unfinished key change to the key now stored (another
 * key may not replace it while its endpoint may deliver), and taking over a rotation whose process
 * on this host is gone.
 */
async function storeIntent(context: TenantsContext, id: string, input: Required<ConnectInput>, health: Health, lease: RotationLease) {
  const { store, credentials, clock } = context;
  let replacing: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const existing = await store.get(id);
    const keyChanged = existing === null || existing.apiKey === null || credentials.openApiKey(existing) !== input.apiKey;
    const begun: ConnectIntentResult = await store.beginConnect({
      id,
      merchantId: health.merchant_id,
      storeIds: [...health.store_ids],
      scopes: [...health.scopes],
      apiKey: credentials.sealApiKey(id, input.apiKey),
      keyChanged,
      allowSameMerchant: input.allowSameMerchant,
      at: clock.now(),
      owner: lease.owner(),
      ...(replacing === undefined ? {} : { replacing }),
    });
    switch (begun.outcome) {
      case 'ok':
        return begun;
      case 'merchant_taken':
        throw new TenantConnectError(
          id,
          'merchant_taken',
          `merchant ${health.merchant_id} is already connected as tenant ${JSON.stringify(begun.existingTenantId)}: one merchant, one set of credentials (pass { allowSameMerchant: true } for a second key of the same merchant, such as a test-store key); nothing was stored`,
          { existingTenantId: begun.existingTenantId },
        );
      case 'merchant_mismatch':
        throw new TenantConnectError(id, 'merchant_mismatch', `the key belongs to merchant ${health.merchant_id}, but the tenant is connected to merchant ${begun.merchantId}: disconnect it first; nothing was stored`);
      case 'disconnecting':
        return refuseWhileDisconnecting(id, 'disconnecting') as never;
      case 'in_progress':
        replacing = RotationLease.goneOwner(begun.rotation);
        if (replacing === undefined || attempt > 2) throw rotationInProgress(id, begun.rotation);
        continue;
      case 'key_change_pending':
        if (attempt > 2) throw rotationInProgress(id, begun.rotation);
        try {
          await runRotation(context, id, begun.rotation, lease);
        } catch (error) {
          // The key it moved to was refused meanwhile (now key_invalid): its endpoints deliver nothing.
          if (!(error instanceof TenantKeyInvalidError)) throw error;
        }
        continue;
    }
  }
}
