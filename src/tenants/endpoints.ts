/**
 * A tenant's webhook endpoints at the service, as connect, a key change, a rotation and disconnect
 * find, register and delete them. Endpoints belong to the key that registered them (spec 4.5: GET
 * /webhooks lists the calling key's endpoints), so each helper works with one key's client and
 * says nothing of the endpoints other keys may hold.
 */
import type { IntegrationClient } from '../client.ts';
import { sleep } from '../clock.ts';
import { NotFoundError, WebhookLimitReachedError } from '../errors/index.ts';
import { TenantConnectError } from '../errors/tenant-errors.ts';
import type { WebhookEndpoint } from '../schemas/index.ts';
import type { TenantsContext } from './context.ts';

/** How long a secret outlives its endpoint's deletion: an attempt sent just before is still verified. */
export const RETIRE_GRACE_MS = 1000;

export const normalised = (url: string) => (URL.canParse(url) ? new URL(url).href : url);
export const withoutQuery = (url: string) => (URL.canParse(url) ? `${new URL(url).origin}${new URL(url).pathname}` : '(not a URL)');
const sameEvents = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((event) => b.includes(event));

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

/**
 * Endpoints replaced by a newer one: deleted at the service, then, a moment later (an attempt
 * already sent is still verified; its event also came through the new endpoint, which the inbox
 * runs once), their secrets.
 */
export async function retireEndpoints(context: TenantsContext, client: IntegrationClient, id: string, endpointIds: readonly string[]): Promise<void> {
  if (endpointIds.length === 0) return;
  for (const endpointId of endpointIds) await deleteAtService(client, endpointId);
  await sleep(context.clock, RETIRE_GRACE_MS);
  for (const endpointId of endpointIds) await context.store.deleteSecret(id, endpointId);
}

/** What {@link ensureEndpoint} found or made under one key. */
export interface EnsuredEndpoint {
  id: string;
  /** Registered by this call (a failure of the next step deletes it). */
  registeredNow: boolean;
  /** The key's endpoints at the URL whose secret is held but whose events differ: to retire once the tenant's deliveries moved. */
  stale: string[];
}

/**
 * The tenant's endpoint under `client`'s key, found by URL and held secret, or registered:
 * - at `url` with a held secret and the integration's events: reused (the one `current` names first);
 * - at `url` without a held secret (a create whose answer was lost): deleted, its secret can never be known;
 * - at `url` with a held secret and other events: kept until its replacement is registered, and returned as `stale`;
 * - none reused: one is registered and its secret stored at once (sealed; if storing fails, it is deleted).
 * With `forgetUnseen`, held secrets whose endpoint this key does not list are dropped: gone at the
 * service (only when no other key may own one, i.e. no key change is under way).
 */
export async function ensureEndpoint(
  context: TenantsContext,
  client: IntegrationClient,
  id: string,
  url: string,
  current: string | null,
  forgetUnseen: boolean,
): Promise<EnsuredEndpoint> {
  const { store, credentials, clock, events } = context;
  const held = new Set((await store.secrets(id)).map((secret) => secret.endpointId));
  const endpoints = await client.webhooks.list();
  const mine = endpoints.filter((endpoint) => normalised(endpoint.url) === url);
  for (const endpoint of mine) if (!held.has(endpoint.id)) await removeEndpoint(context, client, id, endpoint.id);
  const usable = mine.filter((endpoint) => held.has(endpoint.id) && sameEvents(endpoint.events, events));
  const stale = mine.filter((endpoint) => held.has(endpoint.id) && !usable.includes(endpoint)).map((endpoint) => endpoint.id);
  if (forgetUnseen) for (const endpointId of held) if (!endpoints.some((endpoint) => endpoint.id === endpointId)) await store.deleteSecret(id, endpointId);
  const reused = usable.find((endpoint) => endpoint.id === current) ?? usable.at(-1);
  if (reused) return { id: reused.id, registeredNow: false, stale };

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
    // Without its secret the endpoint is useless: it goes too (or the next call removes it).
    await client.webhooks.delete(created.id).catch(() => {});
    throw error;
  }
  return { id: created.id, registeredNow: true, stale };
}

/**
 * Deletes, with `client`'s key, every endpoint of the tenant that key lists (its secret held, or at
 * `url`) but `keep`, and their secrets. The ids deleted.
 */
export async function deleteKeyEndpoints(context: TenantsContext, client: IntegrationClient, id: string, url: string, keep: string | null): Promise<string[]> {
  const held = new Set((await context.store.secrets(id)).map((secret) => secret.endpointId));
  const deleted: string[] = [];
  for (const endpoint of await client.webhooks.list()) {
    if (endpoint.id === keep || !(held.has(endpoint.id) || normalised(endpoint.url) === url)) continue;
    await removeEndpoint(context, client, id, endpoint.id);
    deleted.push(endpoint.id);
  }
  return deleted;
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
