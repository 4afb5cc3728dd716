import { clockOf } from './clock.ts';
import { FaultPlan } from './faults.ts';
import { createCore } from './http/core.ts';
import { fetchHandler } from './http/fetch-adapter.ts';
import { listen } from './http/node-adapter.ts';
import { Platform } from './platform/orders.ts';
import { bucketsFrom } from './rate-limit.ts';
import { CONTROL_ROUTES } from './routes/control.ts';
import { ROUTES } from './routes/table.ts';
import { addKey, addMerchant, merchantSpecIssues, merchantViews, revokeKey } from './merchants.ts';
import { apiKeyOf, COUPON_CODES, createSeededState, KEYS, STORES, type KeyName } from './seed.ts';
import type { SandboxState } from './state.ts';
import type { Sandbox, SandboxKeyInfo, SandboxOptions, SandboxSeed } from './types.ts';
import { DeliveryEngine, viewOf } from './webhooks/delivery-engine.ts';
import { ANSWER_LIMIT_MS, MIN_SCALED_ANSWER_LIMIT_MS } from './webhooks/retry-schedule.ts';
import { dnsResolver, ReceiverPolicy } from './webhooks/ssrf.ts';

/**
 * Starts a local emulator of Integration API v1 on 127.0.0.1: every route and rule of the
 * specification and its wire assumptions, in-memory state with seed data, and signed webhook
 * deliveries with the real retry schedule (scaled by `timeScale`).
 *
 * @example
 * import { createSandbox } from 'integration-sdk/sandbox';
 * import { IntegrationClient } from 'integration-sdk';
 *
 * const sandbox = await createSandbox({ timeScale: 0.001 });
 * const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
 * await client.health();
 * sandbox.createOrder(); // emits order.created to every subscribed endpoint
 * await sandbox.idle();
 * await sandbox.close();
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const timeScale = options.timeScale ?? 1;
  if (!(timeScale >= 0 && Number.isFinite(timeScale))) throw new RangeError(`timeScale must be a finite number ≥ 0, got ${timeScale}`);
  const clock = clockOf(options.clock);
  const random = options.random ?? Math.random;
  const state = createSeededState(clock);
  const seededStoreIds = [...state.storeIds];
  const merchantIssues = (options.merchants ?? []).flatMap((spec, index) => merchantSpecIssues(spec, `merchants[${index}]`));
  if (merchantIssues.length > 0) throw new TypeError(`createSandbox: ${merchantIssues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`);
  for (const spec of options.merchants ?? []) addMerchant(state, spec);
  const receivers = new ReceiverPolicy(options.allowInsecureReceivers ?? true, options.resolveHost ?? dnsResolver);
  const deliveries = new DeliveryEngine({
    state, clock, timeScale, receivers, log: options.log,
    answerTimeoutMs: options.deliveryTimeoutMs ?? Math.max(ANSWER_LIMIT_MS * timeScale, MIN_SCALED_ANSWER_LIMIT_MS),
  });
  let faults = options.faults ? new FaultPlan(options.faults, random) : null;
  const platform = new Platform(state, clock, deliveries);
  const core = createCore({
    state, routes: ROUTES, controls: { routes: CONTROL_ROUTES, keyId: KEYS.full.keyId }, services: { clock, deliveries, receivers, platform },
    buckets: bucketsFrom(options.rate, clock), faults: () => faults, log: options.log,
  });
  const server = await listen(core, options.port ?? 0);
  const keyInfo = (name: KeyName): SandboxKeyInfo => ({ apiKey: apiKeyOf(name), keyId: KEYS[name].keyId, scopes: [...KEYS[name].scopes], storeIds: [...KEYS[name].storeIds] });
  const seed = seedOf(state, { full: keyInfo('full'), oneStore: keyInfo('oneStore'), readOnly: keyInfo('readOnly') });
  let closed: Promise<void> | null = null;

  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    apiKey: seed.keys.full.apiKey,
    keys: { full: seed.keys.full.apiKey, oneStore: seed.keys.oneStore.apiKey, readOnly: seed.keys.readOnly.apiKey },
    storeIds: seededStoreIds,
    merchantId: state.merchantId,
    seed,
    get merchants() {
      return merchantViews(state);
    },
    addMerchant: (spec) => {
      const issues = merchantSpecIssues(spec);
      if (issues.length > 0) throw new TypeError(`addMerchant: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`);
      return addMerchant(state, spec);
    },
    addKey: (merchantId, spec) => addKey(state, merchantId, spec),
    createOrder: (input) => platform.createOrder(input),
    setOrderStatus: (orderId, status) => platform.setOrderStatus(orderId, status),
    handle: fetchHandler(core),
    idle: () => deliveries.idle(),
    waitForDelivery: (id, until) => deliveries.waitFor(id, until),
    deliveries: (filter = {}) => [...state.deliveries.values()]
      .filter((d) => (filter.webhookId === undefined || d.webhook_id === filter.webhookId) && (filter.event === undefined || d.event === filter.event))
      .reverse()
      .map(viewOf),
    setFeatureEnabled: (enabled) => {
      state.featureEnabled = enabled;
    },
    setFaults: (next) => {
      faults = next ? new FaultPlan(next, random) : null;
    },
    revokeKey: (apiKey) => {
      if (!revokeKey(state, apiKey)) throw new Error('revokeKey: not a key of this sandbox.');
    },
    setLoyaltyProgramActive: (active) => {
      state.program.active = active;
    },
    setStoreWriteFailure: (storeId, failing) => {
      if (failing) state.failingStores.add(storeId.toLowerCase());
      else state.failingStores.delete(storeId.toLowerCase());
    },
    getProduct: (externalId) => {
      const product = state.products.get(externalId);
      if (!product) return undefined;
      const { external_id, name, price, gtin, category } = product;
      return { external_id, name, price, gtin, category, stores: Object.fromEntries([...product.stores].map(([id, s]) => [id, { ...s }])) };
    },
    close: () => {
      closed ??= (async () => {
        deliveries.close();
        await server.close();
      })();
      return closed;
    },
  };
}

function seedOf(state: SandboxState, keys: SandboxSeed['keys']): SandboxSeed {
  return {
    merchantId: state.merchantId,
    stores: STORES.map((s) => ({ ...s })),
    keys,
    program: { ...state.program },
    customers: state.customers.map(({ id, name, phone, external_id, points }) => ({ id, name, phone, external_id, points })),
    coupons: COUPON_CODES,
    products: [...state.products.keys()],
  };
}
