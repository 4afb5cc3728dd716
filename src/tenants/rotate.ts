/**
 * `tenants.rotateWebhookSecret(id)` (tenants.md, "Rotating a webhook secret"), and the engine every
 * rotation runs on, a secret rotation's or a key change's (`./key-change.ts`). The service has no
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
 * (the new endpoint may deliver before its secret is stored). One call owns a rotation at a time
 * (`./rotation-lease.ts`): a second call while it runs is refused, never runs step 1 again.
 */
import type { IntegrationClient } from '../client.ts';
import { sleep } from '../clock.ts';
import { WebhookLimitReachedError } from '../errors/index.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { TenantNotFoundError, TenantRotationError } from '../errors/tenant-errors.ts';
import type { SubscribableEvent, WebhookEndpoint } from '../schemas/index.ts';
import { endpointUrl, type TenantsContext } from './context.ts';
import { normalised, removeEndpoint, retireEndpoints, withoutQuery } from './endpoints.ts';
import { registerUnderNewKey, retireOldKey } from './key-change.ts';
import { tenantFromRecord } from './records.ts';
import { awaitTestDelivery, describeLastAttempt } from './rotate-verify.ts';
import { RotationLease, rotationInProgress } from './rotation-lease.ts';
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
export { RETIRE_GRACE_MS } from './endpoints.ts';

export async function rotateTenantSecret(context: TenantsContext, id: string): Promise<Tenant> {
  checkTenantId(id);
  await context.credentials.ready();
  const { store, clock } = context;
  const record = sendable(id, await store.get(id));
  const lease = new RotationLease(store, clock, id);
  let rotation = await lease.claim();
  if (rotation === null) {
    if (record.status === 'connecting' || record.endpointId === null) {
      throw new InvalidInputError([{ path: 'tenantId', message: 'has not finished connecting: call tenants.connect(id, { apiKey }) to complete it before rotating its secret' }]);
    }
    rotation = await store.beginRotation(id, record.endpointId, clock.now(), lease.owner());
    // Another call began one between the claim and here.
    if (!lease.owns(rotation)) throw rotationInProgress(id, rotation);
  }
  // A key change whose call died is completed: its new endpoint has a new secret too.
  return runRotation(context, id, rotation, lease);
}

/**
 * Runs `start` (a rotation `lease` owns) to its end, from whichever step it was left at; the
 * tenant as it ends. A failure gives the rotation up for the next call to resume.
 */
export async function runRotation(context: TenantsContext, id: string, start: TenantRotationRecord, lease: RotationLease): Promise<Tenant> {
  const { store, clock } = context;
  const client = context.clientOf(id);
  return lease.hold(async () => {
    let rotation = start;
    if (rotation.step === 'registering') {
      // Receivers in other processes learn of the rotation at their next poll of the registry's
      // changes: only then do they hold a delivery signed with a secret they have not read yet. A
      // tenant still connecting is held for already.
      if ((await store.get(id))?.status !== 'connecting') await sleep(clock, Math.max(0, rotation.startedAt + ANNOUNCE_MS - clock.now()));
      const newEndpointId = rotation.kind === 'key' ? await registerUnderNewKey(context, id) : await registerSecondEndpoint(context, client, id, rotation, lease);
      rotation = await advance(context, id, lease, 'verifying', newEndpointId);
    }
    const newEndpointId = rotation.newEndpointId!;
    if (rotation.step === 'verifying') {
      // A key change tests its endpoint as connect does; a secret rotation waits for the receiver.
      if (rotation.kind === 'key') await client.webhooks.test(newEndpointId);
      else await verifyNewSecret(context, client, id, newEndpointId);
      rotation = await advance(context, id, lease, 'retiring', newEndpointId);
    }
    // Step 3: deliveries go to the new endpoint from now on; the old one goes, then its secret.
    const moved = await store.finishConnect(id, newEndpointId, clock.now());
    if (moved === null) throw new TenantNotFoundError(id, 'disconnected');
    if (rotation.kind === 'key') await retireOldKey(context, id, rotation, newEndpointId);
    else if (rotation.oldEndpointId !== newEndpointId) await retireEndpoints(context, client, id, [rotation.oldEndpointId]);
    await store.finishRotation(id, lease.token);
    return tenantFromRecord((await store.get(id)) ?? moved);
  });
}

async function verifyNewSecret(context: TenantsContext, client: IntegrationClient, id: string, newEndpointId: string): Promise<void> {
  const outcome = await awaitTestDelivery({
    client,
    endpointId: newEndpointId,
    clock: context.clock,
    timeoutMs: ROTATION_VERIFY_MS,
    // The receiver of createInbox({ tenants }) marks a secret the first time it verifies a delivery.
    verifiedByReceiver: async () => (await context.store.secrets(id)).some((secret) => secret.endpointId === newEndpointId && (secret.verifiedAt ?? null) !== null),
  });
  if (outcome.verified) return;
  throw new TenantRotationError(
    id,
    'not_verified',
    `no receiver verified a test delivery with the new secret of endpoint ${newEndpointId} within ${ROTATION_VERIFY_MS / 1000} s, and ${describeLastAttempt(outcome.lastAttempt)}. ` +
      'Both endpoints stay (the inbox runs each event once); check that the receiver verifies with the tenants registry, then call rotateWebhookSecret again to finish',
    { newEndpointId },
  );
}

async function advance(context: TenantsContext, id: string, lease: RotationLease, step: 'verifying' | 'retiring', newEndpointId: string): Promise<TenantRotationRecord> {
  const next = await context.store.advanceRotation(id, step, newEndpointId, context.clock.now(), lease.token);
  if (next !== null) return next;
  // A disconnect dropped it, or this call's lease ran out and another call took the rotation over.
  const now = await context.store.rotation(id);
  if (now === null) throw new TenantNotFoundError(id, 'disconnected');
  throw rotationInProgress(id, now);
}

/**
 * Step 1, resumable: an endpoint at the URL whose secret is held (a call that died after storing
 * it) is the new one; one whose secret is not (a create whose answer was lost) is deleted; else one
 * is registered with the old endpoint's events and its secret stored at once.
 */
async function registerSecondEndpoint(context: TenantsContext, client: IntegrationClient, id: string, rotation: TenantRotationRecord, lease: RotationLease): Promise<string> {
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
    await store.finishRotation(id, lease.token);
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
