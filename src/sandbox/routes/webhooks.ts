import { randomUUID } from 'node:crypto';
import type { CreatedWebhook, SubscribableEvent, WebhookEndpoint } from '../../schemas/webhooks.ts';
import { isoAt } from '../clock.ts';
import type { Route, RouteContext } from '../http/route.ts';
import { SandboxError, validationError } from '../http/sandbox-error.ts';
import type { WebhookEndpointRecord } from '../state.ts';
import { Checker, isRecord, limitParam, typeOf } from '../validate.ts';
import { viewOf } from '../webhooks/delivery-engine.ts';
import { newWebhookSecret } from '../webhooks/signing.ts';

/** Wire assumption: the only names accepted at registration. */
export const SUBSCRIBABLE_EVENTS: readonly SubscribableEvent[] = ['order.created', 'order.status_changed'];

/** Spec 4.5 rule 2. */
export const MAX_ENDPOINTS_PER_KEY = 5;

const SECRET_WARNING = 'Store this secret now: it is shown only once and cannot be recovered. To replace a lost secret, delete this endpoint and register it again.';

/** Spec 4.5; every route needs webhooks:manage and sees only the calling key's endpoints. */
export const webhookRoutes: Route[] = [
  { method: 'POST', path: '/webhooks', scope: 'webhooks:manage', handler: register },
  { method: 'GET', path: '/webhooks', scope: 'webhooks:manage', handler: list },
  { method: 'DELETE', path: '/webhooks/:id', scope: 'webhooks:manage', handler: remove },
  { method: 'GET', path: '/webhooks/:id/deliveries', scope: 'webhooks:manage', handler: deliveries },
  { method: 'POST', path: '/webhooks/:id/test', scope: 'webhooks:manage', handler: sendTest },
];

async function register(ctx: RouteContext) {
  const { url, events } = readRegistration(ctx.body);
  const endpoint = await registerEndpoint(ctx, url, events);
  const created: CreatedWebhook = { id: endpoint.id, url: endpoint.url, events: [...events], secret: endpoint.secret, warning: SECRET_WARNING, created_at: endpoint.created_at };
  return { status: 201, body: created };
}

/** Spec 4.5 after the body's checks: the limit per key (409), the anti-SSRF check (400), a fresh secret. */
export async function registerEndpoint({ state, key, services }: Pick<RouteContext, 'state' | 'key' | 'services'>, url: URL, events: string[]): Promise<WebhookEndpointRecord> {
  const own = [...state.webhooks.values()].filter((e) => e.keyId === key.keyId);
  if (own.length >= MAX_ENDPOINTS_PER_KEY) {
    throw new SandboxError('WEBHOOK_LIMIT_REACHED', `This integration already has ${MAX_ENDPOINTS_PER_KEY} webhook endpoints; delete one first.`);
  }
  await services.receivers.assertAllowed(url);
  const endpoint: WebhookEndpointRecord = {
    id: randomUUID(), keyId: key.keyId, url: url.href, events, secret: newWebhookSecret(), consecutive_failures: 0, created_at: isoAt(services.clock),
  };
  state.webhooks.set(endpoint.id, endpoint);
  return endpoint;
}

function readRegistration(body: unknown): { url: URL; events: string[] } {
  if (!isRecord(body)) throw validationError([{ path: '', message: `the body must be a JSON object with url and events, got ${typeOf(body)}` }]);
  const check = new Checker();
  const rawUrl = check.string(body.url, 'url', { required: true, max: 2048 });
  let url: URL | undefined;
  if (rawUrl !== undefined) {
    try {
      url = new URL(rawUrl);
    } catch {
      check.add('url', 'is not an absolute URL');
    }
  }
  const events: string[] = [];
  if (!Array.isArray(body.events) || body.events.length === 0) {
    check.add('events', `must be a non-empty array of event names (${SUBSCRIBABLE_EVENTS.join(', ')})`);
  } else {
    body.events.forEach((name: unknown, i) => {
      if (typeof name === 'string' && (SUBSCRIBABLE_EVENTS as readonly string[]).includes(name)) {
        if (!events.includes(name)) events.push(name);
      } else {
        check.add(`events[${i}]`, `unknown event ${JSON.stringify(name)}; subscribe to ${SUBSCRIBABLE_EVENTS.join(' or ')}`);
      }
    });
  }
  if (!check.ok || !url) throw validationError(check.issues);
  return { url, events };
}

function list({ state, key }: RouteContext) {
  const data: WebhookEndpoint[] = [...state.webhooks.values()]
    .filter((e) => e.keyId === key.keyId)
    .map(({ id, url, events, consecutive_failures, created_at }) => ({ id, url, events: [...events], consecutive_failures, created_at }));
  return { status: 200, body: { data } };
}

function remove(ctx: RouteContext) {
  removeEndpoint(ctx, ownEndpoint(ctx));
  return { status: 204 };
}

/** Deletes an endpoint: its deliveries' retries stop. */
export function removeEndpoint({ state, services }: Pick<RouteContext, 'state' | 'services'>, endpoint: WebhookEndpointRecord): void {
  state.webhooks.delete(endpoint.id);
  services.deliveries.forgetEndpoint(endpoint.id);
}

function deliveries(ctx: RouteContext) {
  const endpoint = ownEndpoint(ctx);
  const check = new Checker();
  const limit = limitParam(ctx.query, 20, 100, check);
  if (!check.ok) throw validationError(check.issues);
  const data = [...ctx.state.deliveries.values()]
    .filter((d) => d.webhook_id === endpoint.id)
    .reverse()
    .slice(0, limit)
    .map((record) => {
      const { webhook_id: _webhookId, ...wire } = viewOf(record);
      return wire;
    });
  return { status: 200, body: { data } };
}

function sendTest(ctx: RouteContext) {
  const endpoint = ownEndpoint(ctx);
  const data = { webhook_id: endpoint.id, message: 'Test delivery from the Integration API sandbox.' };
  const [delivery_id] = ctx.services.deliveries.emit('webhook.test', data, [endpoint]);
  return { status: 202, body: { delivery_id } };
}

/** Another key's endpoint is as unknown as a missing one. */
function ownEndpoint({ state, key, params }: RouteContext): WebhookEndpointRecord {
  const endpoint = state.webhooks.get(params.id ?? '');
  if (!endpoint || endpoint.keyId !== key.keyId) throw new SandboxError('NOT_FOUND', `No webhook endpoint ${params.id} for this key.`);
  return endpoint;
}
