/**
 * `tenants.rotateWebhookSecret(id)` (tenants.md, "Rotating a webhook secret"). The service has no
 * rotate route, so a secret is replaced by running two endpoints side by side:
 *
 * 1. `registering` is recorded (the tenant is `rotatingSince`: receivers hold what they cannot
 *    verify), and once every receiver can have seen it, a second endpoint is registered at the
 *    tenant's URL with the old one's events, and its secret stored (sealed) at once: the tenant has
 *    two secrets;
 * 2. `verifying` is recorded, then `webhooks.test` goes to the new endpoint, and the rotation waits
 *    (up to 60 s) until a receiver verified it with the new secret or the delivery log shows it
 *    delivered;
 * 3. `retiring` is recorded and the tenant's endpoint becomes the new one; the old endpoint is
 *    deleted at the service, then (a second later) its secret; the record goes.
 *
 * Each step is recorded before its external call and can be done again, so a second call
 * completes one that failed or whose process died: an endpoint at the URL whose secret was never
 * stored (a create whose answer was lost) is deleted and registered anew; one whose secret is held
 * is taken as the new endpoint; a deleted old endpoint (404) counts as deleted. From the record's
 * start to its end the tenant is `rotatingSince`: receivers hold a delivery no known secret verifies
 * (the new endpoint may deliver before its secret is stored).
 */
import type { IntegrationClient } from '../client.ts';
import { sleep } from '../clock.ts';
import { WebhookLimitReachedError } from '../errors/index.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { TenantNotFoundError, TenantRotationError } from '../errors/tenant-errors.ts';
import type { SubscribableEvent, WebhookEndpoint } from '../schemas/index.ts';
import { deleteAtService, normalised, removeEndpoint, withoutQuery } from './connect.ts';
import { endpointUrl, type TenantsContext } from './context.ts';
import { tenantFromRecord } from './records.ts';
import { awaitTestDelivery, describeLastAttempt } from './rotate-verify.ts';
import type { TenantRotationRecord } from './store.ts';
import { sendable } from './tenant-client.ts';
import { checkTenantId } from './tenant-id.ts';
import type { Tenant } from './types.ts';

/** Step 2's wait, as the contract sets it. */
export const ROTATION_VERIFY_MS = 60_000;
/**
 * How long a rotation is announced (`rotatingSince`) before its second endpoint is registered: two
 * polls of a receiver in another process (`createInbox({ tenants })` reads the registry's changes
 * every second).
 */
export const ANNOUNCE_MS = 2000;
/** How long the old secret outlives its endpoint's deletion. */
export const RETIRE_GRACE_MS = 1000;

/** What a rotation needs beyond the registry's context. */
export interface RotationDeps {
  /** The tenant's own client: a 401 marks it `key_invalid`, and every call goes through its budget. */
  client: IntegrationClient;
  /** Whether a receiver recorded that it verified a delivery signed with this endpoint's secret. */
  verifiedByReceiver(tenantId: string, endpointId: string): Promise<boolean>;
}

export async function rotateTenantSecret(context: TenantsContext, id: string, deps: RotationDeps): Promise<Tenant> {
  checkTenantId(id);
  await context.credentials.ready();
  const { store, clock } = context;
  const record = sendable(id, await store.get(id));
  let rotation = await store.rotation(id);
  if (rotation === null) {
    if (record.status === 'connecting' || record.endpointId === null) {
      throw new InvalidInputError([{ path: 'tenantId', message: 'has not finished connecting: call tenants.connect(id, { apiKey }) to complete it before rotating its secret' }]);
    }
    rotation = await store.beginRotation(id, record.endpointId, clock.now());
  }
  if (rotation.step === 'registering') {
    // Receivers in other processes learn of the rotation at their next poll of the registry's
    // changes: only then do they hold a delivery signed with a secret they have not read yet.
    await sleep(clock, Math.max(0, rotation.startedAt + ANNOUNCE_MS - clock.now()));
    const newEndpointId = await registerSecondEndpoint(context, deps.client, id, rotation);
    rotation = await advance(context, id, 'verifying', newEndpointId);
  }
  const newEndpointId = rotation.newEndpointId!;
  if (rotation.step === 'verifying') {
    const outcome = await awaitTestDelivery({
      client: deps.client,
      endpointId: newEndpointId,
      clock,
      timeoutMs: ROTATION_VERIFY_MS,
      verifiedByReceiver: () => deps.verifiedByReceiver(id, newEndpointId),
    });
    if (!outcome.verified) {
      const seconds = ROTATION_VERIFY_MS / 1000;
      throw new TenantRotationError(
        id,
        'not_verified',
        `no receiver verified a test delivery with the new secret of endpoint ${newEndpointId} within ${seconds} s, and ${describeLastAttempt(outcome.lastAttempt)}. ` +
          'Both endpoints stay (the inbox runs each event once); check that the receiver verifies with the tenants registry, then call rotateWebhookSecret again to finish',
        { newEndpointId },
      );
    }
    rotation = await advance(context, id, 'retiring', newEndpointId);
  }
  // Step 3: deliveries go to the new endpoint from now on; the old one goes, then its secret.
  const moved = await store.finishConnect(id, newEndpointId, clock.now());
  if (moved === null) throw new TenantNotFoundError(id, 'disconnected');
  if (rotation.oldEndpointId !== newEndpointId) {
    await deleteAtService(deps.client, rotation.oldEndpointId);
    // An attempt the old endpoint sent just before the deletion may still be on its way: its
    // secret stays a moment longer, so that the receiver verifies it (its event also came through
    // the new endpoint: the inbox runs it once).
    await sleep(clock, RETIRE_GRACE_MS);
    await store.deleteSecret(id, rotation.oldEndpointId);
  }
  await store.finishRotation(id);
  return tenantFromRecord((await store.get(id)) ?? moved);
}

async function advance(context: TenantsContext, id: string, step: 'verifying' | 'retiring', newEndpointId: string): Promise<TenantRotationRecord> {
  const next = await context.store.advanceRotation(id, step, newEndpointId, context.clock.now());
  // Only a disconnect drops a rotation under way.
  if (next === null) throw new TenantNotFoundError(id, 'disconnected');
  return next;
}

/**
 * Step 1, resumable: an endpoint at the URL whose secret is held (a call that died after storing
 * it) is the new one; one whose secret is not (a create whose answer was lost) is deleted; else one
 * is registered with the old endpoint's events and its secret stored at once.
 */
async function registerSecondEndpoint(context: TenantsContext, client: IntegrationClient, id: string, rotation: TenantRotationRecord): Promise<string> {
  const { store, credentials, clock } = context;
  const endpoints = await client.webhooks.list();
  const old = endpoints.find((endpoint) => endpoint.id === rotation.oldEndpointId);
  const url = old ? normalised(old.url) : endpointUrl(context, id);
  const events = old ? [...old.events] : [...context.events];
  const held = new Set((await store.secrets(id)).map((secret) => secret.endpointId));
  const others = endpoints.filter((endpoint) => endpoint.id !== rotation.oldEndpointId && normalised(endpoint.url) === url);
  const resumed = others.find((endpoint) => held.has(endpoint.id));
  if (resumed) return resumed.id;
  for (const orphan of others) await removeEndpoint(context, client, id, orphan.id);

  let created;
  try {
    created = await client.webhooks.create({ url, events: events as SubscribableEvent[] });
  } catch (error) {
    if (!(error instanceof WebhookLimitReachedError)) throw error;
    // Nothing of the rotation exists at the service: it is not under way (no receiver holds for it).
    await store.finishRotation(id);
    throw await endpointLimit(client, id, rotation.oldEndpointId, error);
  }
  try {
    await store.putSecret({ tenantId: id, endpointId: created.id, secret: credentials.sealSecret(id, created.id, created.secret), createdAt: clock.now() });
  } catch (error) {
    // Without its secret the endpoint is of no use: it goes too (or the next call removes it).
    await client.webhooks.delete(created.id).catch(() => {});
    throw error;
  }
  return created.id;
}

async function endpointLimit(client: IntegrationClient, id: string, oldEndpointId: string, cause: WebhookLimitReachedError): Promise<TenantRotationError> {
  const listed: WebhookEndpoint[] = await client.webhooks.list().catch(() => []);
  // Named without their query string, which may carry a receiver's token.
  const endpoints = listed.map((endpoint) => ({ id: endpoint.id, url: withoutQuery(endpoint.url) }));
  const named = endpoints.map((endpoint) => `${endpoint.id} (${endpoint.url}${endpoint.id === oldEndpointId ? ', this tenant\'s' : ''})`).join(', ');
  return new TenantRotationError(
    id,
    'endpoint_limit',
    `a rotation registers a second endpoint beside ${oldEndpointId}, and the key's integration already has ${listed.length || 5} webhook endpoints${named ? `: ${named}` : ''}; delete one that is not in use, then call rotateWebhookSecret again`,
    { endpoints, cause },
  );
}
