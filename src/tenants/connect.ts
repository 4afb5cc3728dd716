/**
 * `tenants.connect(id, { apiKey })`. Every step is recorded before the next external one, and every
 * step can be done again, so that a second call completes one that failed or whose process died:
 *
 * 1. checks (id, key shape, `health()`, scopes) write nothing;
 * 2. the intent is stored: the sealed key, the merchant, `connecting` for a new tenant (the merchant
 *    rule checked in the same transaction);
 * 3. the endpoint: the service's endpoints at `webhookUrl(id)` are matched with the secrets we
 *    hold; one we hold no secret for (a create whose answer was lost, a process killed before its
 *    secret was stored) is deleted; one we hold is reused; else one is registered and its secret
 *    stored at once (if storing fails, the endpoint is deleted);
 * 4. `webhooks.test` to it (on failure, an endpoint registered by this call is deleted);
 * 5. the tenant becomes `active`.
 */
import type { IntegrationClient } from '../client.ts';
import { NotFoundError, WebhookLimitReachedError } from '../errors/index.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { TenantConnectError } from '../errors/tenant-errors.ts';
import type { WebhookEndpoint } from '../schemas/index.ts';
import { describeKey, endpointUrl, keyClient, type TenantsContext } from './context.ts';
import { tenantFromRecord } from './records.ts';
import { checkTenantId } from './tenant-id.ts';
import type { ConnectInput, Tenant } from './types.ts';

export async function connectTenant(context: TenantsContext, id: string, input: ConnectInput): Promise<Tenant> {
  checkTenantId(id);
  if (input?.allowSameMerchant !== undefined && typeof input.allowSameMerchant !== 'boolean') {
    throw new InvalidInputError([{ path: 'allowSameMerchant', message: 'must be true or false' }]);
  }
  const client = keyClient(context, id, input?.apiKey);
  const url = endpointUrl(context, id);
  await context.credentials.ready();
  const health = await describeKey(id, client);

  const { store, credentials, clock } = context;
  const existing = await store.get(id);
  const keyChanged = existing === null || existing.apiKey === null || credentials.openApiKey(existing) !== input.apiKey;
  const begun = await store.beginConnect({
    id,
    merchantId: health.merchant_id,
    storeIds: [...health.store_ids],
    scopes: [...health.scopes],
    apiKey: credentials.sealApiKey(id, input.apiKey),
    keyChanged,
    allowSameMerchant: input.allowSameMerchant === true,
    at: clock.now(),
  });
  if (begun.outcome === 'merchant_taken') {
    throw new TenantConnectError(
      id,
      'merchant_taken',
      `merchant ${health.merchant_id} is already connected as tenant ${JSON.stringify(begun.existingTenantId)}: one merchant, one set of credentials (pass { allowSameMerchant: true } for a second key of the same merchant, such as a test-store key); nothing was stored`,
      { existingTenantId: begun.existingTenantId },
    );
  }
  if (begun.outcome === 'merchant_mismatch') {
    throw new TenantConnectError(id, 'merchant_mismatch', `the key belongs to merchant ${health.merchant_id}, but the tenant is connected to merchant ${begun.merchantId}: disconnect it first; nothing was stored`);
  }

  const endpoint = await ensureEndpoint(context, client, id, url, begun.record.endpointId);
  try {
    await client.webhooks.test(endpoint.id);
  } catch (error) {
    if (endpoint.registeredNow) await removeEndpoint(context, client, id, endpoint.id).catch(() => {});
    throw error;
  }
  const done = await store.finishConnect(id, endpoint.id, clock.now());
  if (done === null) throw new InvalidInputError([{ path: 'tenantId', message: 'was disconnected while it was being connected' }]);
  return tenantFromRecord(done);
}

const sameEvents = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((event) => b.includes(event));
export const normalised = (url: string) => (URL.canParse(url) ? new URL(url).href : url);
export const withoutQuery = (url: string) => (URL.canParse(url) ? `${new URL(url).origin}${new URL(url).pathname}` : '(not a URL)');

/** Step 3: the tenant's endpoint, found by URL and held secret, or registered. */
async function ensureEndpoint(context: TenantsContext, client: IntegrationClient, id: string, url: string, current: string | null): Promise<{ id: string; registeredNow: boolean }> {
  const { store, credentials, clock, events } = context;
  const held = new Set((await store.secrets(id)).map((secret) => secret.endpointId));
  const endpoints = await client.webhooks.list();
  const mine = endpoints.filter((endpoint) => normalised(endpoint.url) === url);
  // Endpoints at our URL that we hold a secret for stay (two side by side during a secret rotation).
  const usable = mine.filter((endpoint) => held.has(endpoint.id) && sameEvents(endpoint.events, events));
  for (const endpoint of mine) if (!usable.includes(endpoint)) await removeEndpoint(context, client, id, endpoint.id);
  // Secrets of endpoints the service no longer has.
  for (const endpointId of held) if (!endpoints.some((endpoint) => endpoint.id === endpointId)) await store.deleteSecret(id, endpointId);
  const reused = usable.find((endpoint) => endpoint.id === current) ?? usable.at(-1);
  if (reused) return { id: reused.id, registeredNow: false };

  let created;
  try {
    created = await client.webhooks.create({ url, events: [...events] });
  } catch (error) {
    if (error instanceof WebhookLimitReachedError) throw await endpointLimit(client, id, url, error);
    throw error;
  }
  try {
    await store.putSecret({ tenantId: id, endpointId: created.id, secret: credentials.sealSecret(id, created.id, created.secret), createdAt: clock.now() });
  } catch (error) {
    // Without its secret the endpoint is useless: it goes too (or the next connect removes it).
    await client.webhooks.delete(created.id).catch(() => {});
    throw error;
  }
  return { id: created.id, registeredNow: true };
}

/** Deletes an endpoint at the service; one already gone counts as deleted. */
export async function deleteAtService(client: IntegrationClient, endpointId: string): Promise<void> {
  try {
    await client.webhooks.delete(endpointId);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
}

/** Deletes an endpoint at the service (gone already counts), then its secret. */
export async function removeEndpoint(context: TenantsContext, client: IntegrationClient, id: string, endpointId: string): Promise<void> {
  await deleteAtService(client, endpointId);
  await context.store.deleteSecret(id, endpointId);
}

async function endpointLimit(client: IntegrationClient, id: string, url: string, cause: WebhookLimitReachedError): Promise<TenantConnectError> {
  const endpoints: WebhookEndpoint[] = await client.webhooks.list().catch(() => []);
  // Named without their query string, which may carry a receiver's token.
  const foreign = endpoints.filter((endpoint) => normalised(endpoint.url) !== url).map((endpoint) => ({ id: endpoint.id, url: withoutQuery(endpoint.url) }));
  const named = foreign.map((endpoint) => `${endpoint.id} (${endpoint.url})`).join(', ');
  return new TenantConnectError(
    id,
    'endpoint_limit',
    `the key's integration already has 5 webhook endpoints${foreign.length > 0 ? `, and these are not this tenant's: ${named}` : ''}; delete one, then connect again`,
    { foreignEndpoints: foreign, cause },
  );
}
