import { ORDER_STATUSES, type OrderStatus } from '../../schemas/order.ts';
import { SandboxError, validationError } from '../http/sandbox-error.ts';
import type { Route, RouteContext } from '../http/route.ts';
import type { Announced } from '../platform/orders.ts';
import { canonicalStoreId, type SandboxState, type WebhookEndpointRecord } from '../state.ts';
import { Checker, isRecord, typeOf } from '../validate.ts';
import { viewOf } from '../webhooks/delivery-engine.ts';
import { registerEndpoint, removeEndpoint, SUBSCRIBABLE_EVENTS } from './webhooks.ts';
import { addKey, addMerchant, keySpecIssues, merchantSpecIssues, revokeKey, type SandboxKeySpec, type SandboxMerchantKey, type SandboxMerchantSpec } from '../merchants.ts';

/** Events `POST /_sandbox/deliveries` can send. */
export const DELIVERABLE_EVENTS = ['order.created', 'webhook.test'] as const;

/**
 * The controls under `/_sandbox` behind `integration-sdk sandbox order …` and `sandbox deliver`:
 * the platform's side over HTTP, so a developer can make things happen in a running sandbox from
 * another terminal. They are no part of the API surface the client sees, need the sandbox's full
 * key, and skip the feature flag, faults and rate limits: a developer's tool, not the service.
 */
export const CONTROL_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/orders', scope: null, handler: createOrder },
  { method: 'POST', path: '/orders/:id/status', scope: null, handler: changeStatus },
  { method: 'POST', path: '/deliveries', scope: null, handler: deliver },
  { method: 'POST', path: '/merchants', scope: null, handler: createMerchant },
  { method: 'POST', path: '/merchants/:id/keys', scope: null, handler: createKey },
  { method: 'POST', path: '/keys/:id/revoke', scope: null, handler: revoke },
];

/** Another merchant with its stores and keys: `{ stores?: n | [{ name }], keys?: n | [{ scopes, store_ids }] }`. */
function createMerchant(ctx: RouteContext) {
  const body = objectBody(ctx.body, false);
  const spec: Record<string, unknown> = { ...body, keys: Array.isArray(body.keys) ? body.keys.map(keySpecOf) : body.keys };
  const issues = merchantSpecIssues(spec);
  if (issues.length > 0) throw validationError(issues);
  const merchant = withStoreChecks(() => addMerchant(ctx.state, spec as SandboxMerchantSpec));
  return { status: 201, body: { merchant_id: merchant.merchantId, stores: merchant.stores, keys: merchant.keys.map(keyWire) } };
}

/** One more key of a merchant (a rotated key): `{ scopes?, store_ids? }`. */
function createKey(ctx: RouteContext) {
  const merchantId = ctx.params.id ?? '';
  if (!ctx.state.merchants.has(merchantId)) throw new SandboxError('NOT_FOUND', 'No merchant with this id in this sandbox.');
  const spec = keySpecOf(objectBody(ctx.body, false));
  const issues = keySpecIssues(spec, '');
  if (issues.length > 0) throw validationError(issues);
  return { status: 201, body: keyWire(withStoreChecks(() => addKey(ctx.state, merchantId, spec as SandboxKeySpec))) };
}

/** Revokes a key by its id: its next request answers 401 INVALID_API_KEY. */
function revoke(ctx: RouteContext) {
  const keyId = ctx.params.id ?? '';
  if (!ctx.state.keys.has(keyId) || !revokeKey(ctx.state, keyId)) throw new SandboxError('NOT_FOUND', 'No key with this id in this sandbox.');
  return { status: 200, body: { key_id: keyId, revoked: true } };
}

function keySpecOf(key: unknown): unknown {
  if (!isRecord(key)) return key;
  const { store_ids, ...rest } = key;
  return store_ids === undefined ? rest : { ...rest, storeIds: store_ids };
}

function keyWire(key: SandboxMerchantKey) {
  return { api_key: key.apiKey, key_id: key.keyId, scopes: key.scopes, store_ids: key.storeIds };
}

function withStoreChecks<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof RangeError) throw validationError([{ path: 'store_ids', message: error.message }]);
    throw error;
  }
}

function createOrder(ctx: RouteContext) {
  const body = objectBody(ctx.body, false);
  const check = new Checker();
  const storeId = storeOf(ctx, body.store_id, check);
  if (!check.ok) throw validationError(check.issues);
  const announced = ctx.services.platform.announceNewOrder(storeId === undefined ? {} : { store_id: storeId });
  return { status: 201, body: withDeliveries(ctx, announced) };
}

function changeStatus(ctx: RouteContext) {
  const body = objectBody(ctx.body, true);
  const status = body.status;
  if (typeof status !== 'string' || !(ORDER_STATUSES as readonly string[]).includes(status)) {
    throw validationError([{ path: 'status', message: `must be one of ${ORDER_STATUSES.join(', ')}` }]);
  }
  const orderId = ctx.params.id ?? '';
  if (!ctx.state.orders.has(orderId)) throw new SandboxError('NOT_FOUND', 'No order with this id in this sandbox (orders live until it stops).');
  const previous_status = ctx.state.orders.get(orderId)?.order.status;
  const announced = ctx.services.platform.changeStatus(orderId, status as OrderStatus);
  return { status: 200, body: { previous_status, ...withDeliveries(ctx, announced) } };
}

/**
 * Per sandbox (its state), the endpoint `deliver` registered last. `deliver` keeps one endpoint of
 * its own: run after run against receivers on new ports, it would otherwise fill the key's five.
 */
const deliverEndpoints = new WeakMap<SandboxState, string>();

/**
 * One delivery to one URL, whatever the other endpoints: the URL's endpoint is used (its secret
 * signs), or registered under the full key when there is none, so that the receiver can verify
 * with the secret answered here and later orders reach it too. An endpoint an earlier `deliver`
 * registered for another URL is deleted first (`replaced`): `deliver` never holds more than one of
 * the key's five. Answers once attempt 1 is over.
 */
async function deliver(ctx: RouteContext) {
  const body = objectBody(ctx.body, true);
  const check = new Checker();
  const rawUrl = check.string(body.url, 'url', { required: true, max: 2048 });
  const event = body.event ?? 'order.created';
  if (typeof event !== 'string' || !(DELIVERABLE_EVENTS as readonly string[]).includes(event)) {
    check.add('event', `must be one of ${DELIVERABLE_EVENTS.join(', ')} (order.status_changed: change an order's status)`);
  }
  const storeId = storeOf(ctx, body.store_id, check);
  const url = rawUrl === undefined ? undefined : URL.canParse(rawUrl) ? new URL(rawUrl) : void check.add('url', 'is not an absolute URL');
  if (!check.ok || !url) throw validationError(check.issues);
  let endpoint = [...ctx.state.webhooks.values()].find((e) => e.url === url.href);
  const registered = endpoint === undefined;
  let replaced: WebhookEndpointRecord | undefined;
  if (endpoint === undefined) {
    replaced = ctx.state.webhooks.get(deliverEndpoints.get(ctx.state) ?? '');
    await ctx.services.receivers.assertAllowed(url); // a refused URL leaves the earlier endpoint in place
    if (replaced) removeEndpoint(ctx, replaced);
    endpoint = await registerEndpoint(ctx, url, [...SUBSCRIBABLE_EVENTS]);
    deliverEndpoints.set(ctx.state, endpoint.id);
  }
  const { deliveries, platform } = ctx.services;
  let orderId: string | null = null;
  let deliveryId: string;
  if (event === 'webhook.test') {
    [deliveryId = ''] = deliveries.emit('webhook.test', { webhook_id: endpoint.id, message: 'Test delivery from the Integration API sandbox.' }, [endpoint]);
  } else {
    const announced = platform.announceNewOrder(storeId === undefined ? {} : { store_id: storeId }, [endpoint]);
    orderId = announced.order.order_id;
    [deliveryId = ''] = announced.deliveryIds;
  }
  const delivery = await deliveries.waitFor(deliveryId, (d) => d.attempt_count >= 1 && d.status !== 'pending');
  return { status: 200, body: { delivery, order_id: orderId, webhook: endpointView(endpoint, registered), replaced: replaced ? { id: replaced.id, url: replaced.url } : null } };
}

function objectBody(body: unknown, required: boolean): Record<string, unknown> {
  if (body === undefined && !required) return {};
  if (!isRecord(body)) throw validationError([{ path: '', message: `the body must be a JSON object, got ${typeOf(body)}` }]);
  return body;
}

function storeOf({ state }: RouteContext, value: unknown, check: Checker): string | undefined {
  const storeId = check.string(value, 'store_id');
  if (storeId === undefined) return undefined;
  if (!state.storeIds.includes(canonicalStoreId(storeId))) {
    check.add('store_id', `is not a store of this sandbox (${state.storeIds.join(', ')})`);
    return undefined;
  }
  return canonicalStoreId(storeId);
}

function withDeliveries({ state }: RouteContext, { order, deliveryIds }: Announced) {
  const deliveries = deliveryIds.flatMap((id) => {
    const record = state.deliveries.get(id);
    const endpoint = record && state.webhooks.get(record.webhook_id);
    return record && endpoint ? [{ ...viewOf(record), url: endpoint.url }] : [];
  });
  return { order, deliveries };
}

/** The secret is answered on purpose: the developer's receiver verifies with it. */
function endpointView(endpoint: WebhookEndpointRecord, registered: boolean) {
  return { id: endpoint.id, url: endpoint.url, events: [...endpoint.events], secret: endpoint.secret, registered };
}
