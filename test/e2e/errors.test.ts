/**
 * Every error path the sandbox can produce, arriving through the real client over a socket as the
 * right error class with its fields (issue 4 part 7, item 2): spec part 7, surface "Errors".
 */
import { describe, expect, test } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BulkOperationError,
  CouponInvalidError,
  CustomerNotFoundError,
  FeatureDisabledError,
  ForbiddenStoreError,
  InsufficientBalanceError,
  InsufficientScopeError,
  IntegrationError,
  NoProgramError,
  NotFoundError,
  RateLimitError,
  SsrfBlockedError,
  ValidationError,
  WebhookLimitReachedError,
} from 'integration-sdk';
import { clientFor, rejectionOf, ScaledClock, startSandbox } from './helpers.ts';

const UNKNOWN_ORDER = '00000000-0000-4000-8000-000000000000';

describe('401 INVALID_API_KEY', () => {
  test('a well-formed key the service does not know', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox, { apiKey: 'service_nosuchkey_0123456789abcdef' });
    const error = await rejectionOf(client.health());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_API_KEY', requestMethod: 'GET', requestPath: '/integration/v1/health' });
    expect(JSON.stringify(error)).not.toContain('0123456789abcdef');
    expect(String((error as Error).message)).not.toContain('0123456789abcdef');
    expect(exchanges).toHaveLength(1); // never retried
  });

  test('a revoked key stops working on its next request (no credential cache)', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox, { apiKey: sandbox.keys.oneStore });
    expect((await client.health()).status).toBe('ok');
    sandbox.revokeKey(sandbox.keys.oneStore);
    const error = await rejectionOf(client.loyalty.program());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_API_KEY', requestPath: '/integration/v1/loyalty/program' });
    expect(exchanges.map((e) => e.status)).toEqual([200, 401]);
    // Other keys are unaffected.
    expect((await clientFor(sandbox).client.health()).status).toBe('ok');
  });
});

describe('403 INSUFFICIENT_SCOPE', () => {
  test('the read-only key writing: requiredScope and grantedScopes, for plain and bulk calls', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox, { apiKey: sandbox.keys.readOnly });

    const credit = await rejectionOf(client.loyalty.credit({ external_id: 'CUST-001', points: 5 }));
    expect(credit).toBeInstanceOf(InsufficientScopeError);
    expect(credit).toMatchObject({
      status: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'loyalty:write', grantedScopes: ['orders:read', 'loyalty:read'],
      details: { required_scope: 'loyalty:write', granted_scopes: ['orders:read', 'loyalty:read'] },
    });

    const webhook = await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/x', events: ['order.created'] }));
    expect(webhook).toBeInstanceOf(InsufficientScopeError);
    expect(webhook).toMatchObject({ requiredScope: 'webhooks:manage', requestMethod: 'POST', requestPath: '/integration/v1/webhooks' });

    const bulk = await rejectionOf(client.catalog.upsertProducts([{ external_id: 'RO-1', name: 'x', price: 1 }]));
    expect(bulk).toBeInstanceOf(BulkOperationError);
    const cause = (bulk as BulkOperationError).cause;
    expect(cause).toBeInstanceOf(InsufficientScopeError);
    expect(cause).toMatchObject({ requiredScope: 'catalog:write', grantedScopes: ['orders:read', 'loyalty:read'] });
    expect((bulk as BulkOperationError).partial).toMatchObject({ sync_ids: [], results: [] });

    const stock = await rejectionOf(client.stock.set([{ external_id: 'SKU-1001', store_id: sandbox.storeIds[0] as string, stock_quantity: 1 }]));
    expect((stock as BulkOperationError).cause).toMatchObject({ requiredScope: 'stock:write' });

    // 403 is never retried: one attempt per call (webhooks.create's look at the endpoints first is refused too).
    expect(exchanges.map((e) => e.status)).toEqual([403, 403, 403, 403, 403]);
    expect(sandbox.getProduct('RO-1')).toBeUndefined();
    expect(sandbox.getProduct('SKU-1001')?.stores[sandbox.storeIds[0] as string]?.stock_quantity).toBe(12);
  });
});

describe('403 FORBIDDEN_STORE', () => {
  test('one-store key redeeming a coupon in another store: whole-call error, nothing redeemed', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox, { apiKey: sandbox.keys.oneStore });
    const error = await rejectionOf(client.loyalty.redeemCoupon({ code: 'WELCOME10', external_id: 'CUST-001', store_id: sandbox.storeIds[1] as string }));
    expect(error).toBeInstanceOf(ForbiddenStoreError);
    expect(error).toMatchObject({ status: 403, code: 'FORBIDDEN_STORE', requestPath: '/integration/v1/loyalty/coupons/redeem' });
    // In its own store the same redemption works.
    const ok = await client.loyalty.redeemCoupon({ code: 'WELCOME10', external_id: 'CUST-001', store_id: sandbox.storeIds[0] as string });
    expect(ok.redemption.discount).toBe(10);
  });

  test('per item in the bulk upsert and in stock.set, with no side effect for the item', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox, { apiKey: sandbox.keys.oneStore });
    const [storeA, storeB] = sandbox.storeIds as [string, string];
    const bulk = await client.catalog.upsertProducts([
      { external_id: 'OS-1', name: 'ok', price: 1, stores: [{ store_id: storeA, stock_quantity: 1 }] },
      { external_id: 'OS-2', name: 'mixed', price: 2, stores: [{ store_id: storeA, stock_quantity: 2 }, { store_id: storeB, stock_quantity: 3 }] },
    ]);
    expect(bulk.summary).toEqual({ created: 1, updated: 0, errors: 1 });
    expect(bulk.results[1]).toMatchObject({ index: 1, external_id: 'OS-2', status: 'error', error: { code: 'FORBIDDEN_STORE' } });
    expect(sandbox.getProduct('OS-1')?.stores).toEqual({ [storeA]: { stock_quantity: 1, price_override: null, active: true } });
    expect(sandbox.getProduct('OS-2')).toBeUndefined();

    const stock = await client.stock.set([
      { external_id: 'SKU-1001', store_id: storeB, stock_quantity: 99 },
      { external_id: 'SKU-1001', store_id: storeA, stock_quantity: 5 },
    ]);
    expect(stock.summary).toEqual({ updated: 1, errors: 1 });
    expect(stock.results[0]).toMatchObject({ index: 0, external_id: 'SKU-1001', store_id: storeB, status: 'error', error: { code: 'FORBIDDEN_STORE' } });
    expect(sandbox.getProduct('SKU-1001')?.stores).toEqual({ [storeA]: { stock_quantity: 5, price_override: null, active: true } });
  });
});

describe('400 VALIDATION_ERROR with issues', () => {
  test('whole-request validation errors carry { path, message } issues', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    // Event names are left to the service (docs/errors.md).
    const events = await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/x', events: ['order.created', 'order.deleted' as 'order.created'] }));
    expect(events).toBeInstanceOf(ValidationError);
    expect(events).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect((events as ValidationError).issues).toEqual([{ path: 'events[1]', message: expect.any(String) }]);
    expect((events as ValidationError).details).toEqual((events as ValidationError).issues);

    // More than 500 items in one request (only possible around the batching of upsertProducts).
    const items = Array.from({ length: 501 }, (_, i) => ({ external_id: `V-${i}`, name: 'x', price: 1 }));
    const tooMany = await rejectionOf(client.request({ method: 'POST', path: '/products/bulk', body: { items } }));
    expect(tooMany).toBeInstanceOf(ValidationError);
    expect((tooMany as ValidationError).issues).toEqual([{ path: 'items', message: expect.stringContaining('500') }]);
    expect(sandbox.getProduct('V-0')).toBeUndefined();

    const phone = await rejectionOf(client.loyalty.balance({ phone: '123' }));
    expect(phone).toBeInstanceOf(ValidationError);
    expect((phone as ValidationError).issues).toEqual([{ path: 'phone', message: expect.any(String) }]);
    expect((phone as ValidationError).requestPath).toBe('/integration/v1/loyalty/balance'); // no query (the phone) in the error
    expect(exchanges.filter((e) => !(e.method === 'GET' && e.path.endsWith('/webhooks'))).map((e) => e.status)).toEqual([400, 400, 400]);
  });

  test('item VALIDATION_ERROR: a new product without name and price', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const result = await client.catalog.upsertProducts([{ external_id: 'NEW-NO-NAME' }]);
    expect(result.results).toEqual([{ index: 0, external_id: 'NEW-NO-NAME', status: 'error', error: { code: 'VALIDATION_ERROR', message: expect.any(String) } }]);
    expect(sandbox.getProduct('NEW-NO-NAME')).toBeUndefined();
  });
});

describe('404s', () => {
  test('NOT_FOUND for an order outside the key\'s stores, answered exactly as for a missing one', async () => {
    const sandbox = await startSandbox();
    const order = sandbox.createOrder({ store_id: sandbox.storeIds[1], source_channel: 'marketplace' });
    const { client } = clientFor(sandbox, { apiKey: sandbox.keys.oneStore });
    const outside = await rejectionOf(client.orders.get(order.order_id));
    const missing = await rejectionOf(client.orders.get(UNKNOWN_ORDER));
    for (const error of [outside, missing]) {
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
    // Existence is not confirmed: same message and details.
    expect((outside as ApiError).message.replace(order.order_id, 'ID')).toBe((missing as ApiError).message.replace(UNKNOWN_ORDER, 'ID'));
    expect((outside as ApiError).details).toEqual((missing as ApiError).details);
    expect(await client.orders.findByExternalId(order.external_order_id as string)).toBeNull();
    // The full key sees it.
    expect((await clientFor(sandbox).client.orders.get(order.order_id)).order_id).toBe(order.order_id);
  });

  test('POST /orders through client.request: 404 (the route was removed in v1.1), not retried', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const error = await rejectionOf(client.request({ method: 'POST', path: '/orders', body: { items: [] } }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', requestMethod: 'POST', requestPath: '/integration/v1/orders' });
    expect(exchanges).toHaveLength(1);
  });

  test('CUSTOMER_NOT_FOUND: loyalty is find-only', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const error = await rejectionOf(client.loyalty.credit({ phone: '+55 31 99999-0000', points: 10 }));
    expect(error).toBeInstanceOf(CustomerNotFoundError);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'CUSTOMER_NOT_FOUND' });
    expect(await rejectionOf(client.loyalty.balance({ external_id: 'CUST-404' }))).toBeInstanceOf(CustomerNotFoundError);
  });

  test('NO_PROGRAM once the program is deactivated; coupons still work', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    sandbox.setLoyaltyProgramActive(false);
    for (const call of [client.loyalty.program(), client.loyalty.balance({ external_id: 'CUST-001' }), client.loyalty.statement({ external_id: 'CUST-001' }), client.loyalty.credit({ external_id: 'CUST-001', points: 1 })]) {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(NoProgramError);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'NO_PROGRAM' });
    }
    expect((await client.loyalty.validateCoupon({ code: 'WELCOME10' })).valid).toBe(true);
    sandbox.setLoyaltyProgramActive(true);
    expect((await client.loyalty.balance({ external_id: 'CUST-001' })).points).toBe(500);
  });
});

describe('422s', () => {
  test('INSUFFICIENT_BALANCE: nothing debited', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const error = await rejectionOf(client.loyalty.debit({ external_id: 'CUST-002', points: 41 }));
    expect(error).toBeInstanceOf(InsufficientBalanceError);
    expect(error).toMatchObject({ status: 422, code: 'INSUFFICIENT_BALANCE', requestPath: '/integration/v1/loyalty/points/debit' });
    expect(exchanges).toHaveLength(1);
    expect((await client.loyalty.balance({ external_id: 'CUST-002' })).points).toBe(40);
    expect((await client.loyalty.debit({ external_id: 'CUST-002', points: 40 })).balance).toBe(0);
  });

  test('COUPON_INVALID: 404 for an unknown code, 422 for expired, inactive and used up', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const unknown = await rejectionOf(client.loyalty.validateCoupon({ code: 'NOPE2026' }));
    expect(unknown).toBeInstanceOf(CouponInvalidError);
    expect(unknown).toMatchObject({ status: 404, code: 'COUPON_INVALID' });
    for (const code of ['SUMMER2020', 'PAUSED5', 'ONCE50']) {
      const error = await rejectionOf(client.loyalty.validateCoupon({ code }));
      expect(error).toBeInstanceOf(CouponInvalidError);
      expect(error).toMatchObject({ status: 422, code: 'COUPON_INVALID' });
    }
    const redeem = await rejectionOf(client.loyalty.redeemCoupon({ code: 'SUMMER2020', external_id: 'CUST-001', store_id: sandbox.storeIds[0] as string }));
    expect(redeem).toBeInstanceOf(CouponInvalidError);
    expect(redeem).toMatchObject({ status: 422, requestPath: '/integration/v1/loyalty/coupons/redeem' });
  });
});

describe('webhook registration errors', () => {
  test('SSRF_BLOCKED with production receiver rules: http://, private and loopback addresses', async () => {
    const sandbox = await startSandbox({ allowInsecureReceivers: false, resolveHost: async () => ['10.1.2.3'] });
    const { client, exchanges } = clientFor(sandbox);
    for (const url of ['http://erp.example.com/hooks', 'https://127.0.0.1/hooks', 'https://192.168.0.10/hooks', 'https://erp.internal.example/hooks']) {
      const error = await rejectionOf(client.webhooks.create({ url, events: ['order.created'] }));
      expect(error).toBeInstanceOf(SsrfBlockedError);
      expect(error).toMatchObject({ status: 400, code: 'SSRF_BLOCKED', requestPath: '/integration/v1/webhooks' });
    }
    expect(exchanges.filter((e) => e.method !== 'GET').map((e) => e.status)).toEqual([400, 400, 400, 400]);
    expect(await client.webhooks.list()).toEqual([]);
  });

  test('WEBHOOK_LIMIT_REACHED at the sixth endpoint; deleting one frees a place', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.webhooks.create({ url: `http://127.0.0.1:9/h${i}`, events: ['order.created'] })).id);
    const error = await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/h5', events: ['order.created'] }));
    expect(error).toBeInstanceOf(WebhookLimitReachedError);
    expect(error).toMatchObject({ status: 409, code: 'WEBHOOK_LIMIT_REACHED' });
    expect(await client.webhooks.list()).toHaveLength(5);
    await client.webhooks.delete(ids[0] as string);
    await client.webhooks.create({ url: 'http://127.0.0.1:9/h5', events: ['order.created'] });
    expect((await client.webhooks.list()).map((w) => w.url)).toEqual([1, 2, 3, 4, 5].map((i) => `http://127.0.0.1:9/h${i}`));
    // A first-attempt 404 on delete still throws.
    expect(await rejectionOf(client.webhooks.delete(ids[0] as string))).toBeInstanceOf(NotFoundError);
  });
});

describe('503 FEATURE_DISABLED', () => {
  test('every route, health included, and never retried', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox, { maxRetries: 5 });
    sandbox.setFeatureEnabled(false);
    const health = await rejectionOf(client.health());
    expect(health).toBeInstanceOf(FeatureDisabledError);
    expect(health).toMatchObject({ status: 503, code: 'FEATURE_DISABLED' });
    expect(await rejectionOf(client.orders.get(UNKNOWN_ORDER))).toBeInstanceOf(FeatureDisabledError);
    const bulk = await rejectionOf(client.catalog.upsertProducts([{ external_id: 'FD-1', name: 'x', price: 1 }]));
    expect((bulk as BulkOperationError).cause).toBeInstanceOf(FeatureDisabledError);
    expect(exchanges.map((e) => [e.path, e.status])).toEqual([
      ['/integration/v1/health', 503],
      [`/integration/v1/orders/${UNKNOWN_ORDER}`, 503],
      ['/integration/v1/products/bulk', 503],
    ]);
    sandbox.setFeatureEnabled(true);
    expect((await client.health()).status).toBe('ok');
  });
});

describe('429 RATE_LIMITED', () => {
  test('a small sandbox bucket: the client waits Retry-After and succeeds', async () => {
    // Both sides on one clock running 5× faster: the 1 s Retry-After takes 200 ms of wall time.
    const clock = new ScaledClock(5);
    const sandbox = await startSandbox({ clock, rate: { perKey: { capacity: 2, refillPerSecond: 1 }, perIp: false } });
    const { client, exchanges } = clientFor(sandbox, { clock });
    const results = [await client.health(), await client.health(), await client.health()];
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
    expect(exchanges.map((e) => [e.status, e.code])).toEqual([[200, undefined], [200, undefined], [429, 'RATE_LIMITED'], [200, undefined]]);
    // The wait before the retry was exactly Retry-After (1 s): random() = 0 rules out any backoff.
    // Every other timer is an attempt's 30 s deadline, or the rest of the key-wide pause when the
    // 1 s timer fired a little early (Node's timers run on a loop time cached to the millisecond,
    // up to 5 ms of this clock): the retry is never sent before the pause ends.
    const [retryWait, ...rest] = clock.delays.filter((ms) => ms !== 30_000);
    expect(retryWait).toBe(1_000);
    for (const ms of rest) expect(ms).toBeLessThan(5);
  });

  test('a 429 pauses every call of the client, not only the one that met it', async () => {
    // Both sides on one clock running 5× faster (see above).
    const clock = new ScaledClock(5);
    const sandbox = await startSandbox({ clock, rate: { perKey: { capacity: 2, refillPerSecond: 2 }, perIp: false } });
    let pausedAt: number | undefined;
    let other: Promise<unknown> | undefined;
    const { client, exchanges } = clientFor(sandbox, {
      clock,
      // The client warns once the pause is in place: start another call right then.
      logger: {
        warn: () => {
          pausedAt ??= clock.now();
          other ??= client.loyalty.program();
        },
      },
    });
    await client.health();
    await client.health(); // the bucket is empty now
    await client.health(); // 429, Retry-After: 1 → the client pauses for 1 s, then retries
    await other;
    expect(exchanges.slice(0, 3).map((e) => [e.path, e.status])).toEqual([
      ['/integration/v1/health', 200],
      ['/integration/v1/health', 200],
      ['/integration/v1/health', 429],
    ]);
    // After the pause the bucket holds 2 tokens again: the retry and the other call both pass.
    expect(exchanges.slice(3).map((e) => [e.path, e.status]).sort()).toEqual([
      ['/integration/v1/health', 200],
      ['/integration/v1/loyalty/program', 200],
    ]);
    // The other call began during the pause, and neither was sent before the pause had run out,
    // counted from the 429 (virtual ms, with 20 ms of tolerance). Not from pausedAt: the warning
    // is logged after the pause is in place, so under load it comes a few ms into it.
    const limited = exchanges[2] as { at: number };
    expect((pausedAt as number) - limited.at).toBeLessThan(500);
    for (const after of exchanges.slice(3)) expect(after.at - limited.at).toBeGreaterThanOrEqual(980);
  });

  test('aborting the signal during the Retry-After wait rejects at once with signal.reason', async () => {
    const sandbox = await startSandbox({ rate: { perKey: { capacity: 1, refillPerSecond: 0.1 }, perIp: false } });
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const { client, exchanges } = clientFor(sandbox, { logger: { warn: () => setImmediate(() => controller.abort(reason)) } });
    await client.health();
    const started = Date.now();
    // Retry-After is 10 s; the abort comes right after the pause has begun.
    expect(await rejectionOf(client.health({ signal: controller.signal }))).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(exchanges.map((e) => e.status)).toEqual([200, 429]);
  });

  test('a Retry-After above maxRetryAfterMs throws RateLimitError at once', async () => {
    const sandbox = await startSandbox({ rate: { perKey: { capacity: 1, refillPerSecond: 0.25 }, perIp: false } });
    const { client, exchanges } = clientFor(sandbox, { maxRetryAfterMs: 3_000 });
    await client.health();
    const started = Date.now();
    const error = await rejectionOf(client.health());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterMs: 4_000 });
    expect((error as RateLimitError).headers['retry-after']).toBe('4');
    expect(exchanges.map((e) => e.status)).toEqual([200, 429]);
  });
});

describe('item errors of the service', () => {
  test('PRODUCT_NOT_FOUND and STORE_WRITE_FAILED in stock.set; STORE_WRITE_FAILED in the bulk upsert', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const [storeA, storeB] = sandbox.storeIds as [string, string];
    sandbox.setStoreWriteFailure(storeB, true);
    const stock = await client.stock.set([
      { external_id: 'NOT-IN-CATALOG', store_id: storeA, stock_quantity: 1 },
      { external_id: 'SKU-1002', store_id: storeB, stock_quantity: 2 },
      { external_id: 'SKU-1002', store_id: storeA, stock_quantity: 1.5 },
    ]);
    expect(stock.summary).toEqual({ updated: 1, errors: 2 });
    expect(stock.results.map((r) => [r.index, r.external_id, r.store_id, r.status, r.error?.code])).toEqual([
      [0, 'NOT-IN-CATALOG', storeA, 'error', 'PRODUCT_NOT_FOUND'],
      [1, 'SKU-1002', storeB, 'error', 'STORE_WRITE_FAILED'],
      [2, 'SKU-1002', storeA, 'updated', undefined],
    ]);
    expect(sandbox.getProduct('NOT-IN-CATALOG')).toBeUndefined();
    expect(sandbox.getProduct('SKU-1002')?.stores).toEqual({ [storeA]: { stock_quantity: 1.5, price_override: null, active: true } });

    const bulk = await client.catalog.upsertProducts([{ external_id: 'SWF-1', name: 'x', price: 3, stores: [{ store_id: storeB, stock_quantity: 4 }] }]);
    expect(bulk.results).toEqual([{ index: 0, external_id: 'SWF-1', status: 'error', error: { code: 'STORE_WRITE_FAILED', message: expect.any(String) } }]);
    expect(bulk.summary).toEqual({ created: 0, updated: 0, errors: 1 });
  });
});

test('every error above is an IntegrationError and an ApiError carries the response headers', async () => {
  const sandbox = await startSandbox();
  const { client } = clientFor(sandbox);
  const error = await rejectionOf(client.orders.get(UNKNOWN_ORDER));
  expect(error).toBeInstanceOf(IntegrationError);
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).headers['content-type']).toMatch(/^application\/json/);
});

test('logs and errors never carry the key, a phone or a customer\'s name; an idempotency key only in its own field of a loyalty write\'s error', async () => {
  const sandbox = await startSandbox();
  const lines: unknown[][] = [];
  const capture = (...args: unknown[]) => void lines.push(args);
  const { client } = clientFor(sandbox, { logger: { debug: capture, info: capture, warn: capture, error: capture } });
  await client.loyalty.balance({ phone: '+5511987654321' });
  await client.loyalty.credit({ phone: '+5511987654321', points: 3, idempotency_key: 'idem-secret-123' });
  const errors = [
    await rejectionOf(client.loyalty.balance({ phone: '+5531999990000' })),
    await rejectionOf(client.loyalty.debit({ phone: '+5511987654321', points: 100_000, idempotency_key: 'idem-secret-456' })),
  ];
  expect(lines.length).toBeGreaterThanOrEqual(4);
  // the key of a failed write is handed back for the safe repeat (docs/loyalty.md), nowhere else
  expect(errors[1]).toMatchObject({ idempotency_key: 'idem-secret-456' });
  const withoutKeyField = errors.map((e) => ({ ...(JSON.parse(JSON.stringify(e)) as object), idempotency_key: undefined }));
  const text = JSON.stringify(lines) + JSON.stringify(withoutKeyField) + errors.map((e) => `${(e as Error).message} ${(e as Error).stack}`).join(' ');
  for (const secret of [sandbox.apiKey, '5f0c9a3e7b2d4c18a6e1f9b0d3c7a254', '987654321', '999990000', 'idem-secret', 'Maria']) expect(text).not.toContain(secret);
  expect(lines[0]?.[1]).toMatchObject({ method: 'GET', path: '/integration/v1/loyalty/balance', status: 200, attempt: 1 });
});
