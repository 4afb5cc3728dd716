import { createServer, type Server } from 'node:http';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ForbiddenStoreError,
  InsufficientScopeError,
  IntegrationClient,
  AuthenticationError,
  NotFoundError,
  SsrfBlockedError,
  ValidationError,
  CustomerNotFoundError,
  FeatureDisabledError,
  RateLimitError,
} from 'integration-sdk';
import { createSandbox } from 'integration-sdk/sandbox';
import { verifyWebhook, type WebhookEvent } from 'integration-sdk/webhooks';

type Sandbox = Awaited<ReturnType<typeof createSandbox>>;

describe('sandbox', () => {
  let sandbox: Sandbox;
  let client: IntegrationClient;
  let receiver: Server;
  let receiverUrl: string;
  const received: { body: string; headers: Record<string, string | string[] | undefined> }[] = [];

  beforeAll(async () => {
    sandbox = await createSandbox({ timeScale: 0.001 });
    client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.statusCode = 200;
      res.end('ok');
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  });
  afterAll(async () => {
    await sandbox.close();
    await new Promise((r) => receiver.close(r));
  });

  async function waitFor<T>(find: () => T | undefined, ms = 5_000): Promise<T> {
    const until = Date.now() + ms;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > until) throw new Error('timed out waiting');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('returns the documented fields', () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(sandbox.apiKey).toMatch(/^service_[^_]+_.+$/);
    expect(typeof sandbox.keys).toBe('object');
    expect(Array.isArray(sandbox.storeIds)).toBe(true);
    expect(sandbox.storeIds.length).toBeGreaterThan(0);
    for (const fn of ['createOrder', 'setOrderStatus', 'handle', 'close'] as const) expect(typeof sandbox[fn]).toBe('function');
  });

  it('health with every key', async () => {
    const health = await client.health();
    expect(health.status).toBe('ok');
    expect(health.scopes).toEqual(expect.arrayContaining(['catalog:write', 'webhooks:manage']));
    for (const key of Object.values(sandbox.keys)) {
      await expect(new IntegrationClient({ apiKey: key, baseUrl: sandbox.url }).health()).resolves.toMatchObject({ status: 'ok' });
    }
    await expect(new IntegrationClient({ apiKey: 'service_nope_nope', baseUrl: sandbox.url }).health()).rejects.toBeInstanceOf(AuthenticationError);
    const withPrefix = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: `${sandbox.url}/integration/v1` });
    await expect(withPrefix.health()).resolves.toMatchObject({ status: 'ok' });
  });

  it('bulk upsert: created then updated, duplicates, gtin, 3 decimals, forbidden store per item', async () => {
    const [store0, store1] = sandbox.storeIds as [string, string];
    const items = [
      { external_id: 'CONF-1', name: 'One', price: 10, gtin: '12345', stores: [{ store_id: store0, stock_quantity: 1.125 }] },
      { external_id: 'CONF-2', name: 'Two', price: 20 },
      { external_id: 'CONF-1', name: 'One again', price: 11 },
    ];
    const first = await client.catalog.upsertProducts(items);
    expect(first.results.map((r) => r.status)).toEqual(['created', 'created', 'error']);
    expect(first.summary).toEqual({ created: 2, updated: 0, errors: 1 });
    const second = await client.catalog.upsertProducts(items.slice(0, 2));
    expect(second.results.map((r) => r.status)).toEqual(['updated', 'updated']);
    expect(second.sync_ids).toHaveLength(1);

    const oneStore = new IntegrationClient({ apiKey: sandbox.keys.oneStore, baseUrl: sandbox.url });
    const scoped = await oneStore.catalog.upsertProducts([{ external_id: 'CONF-3', name: 'Three', price: 1, stores: [{ store_id: store1, stock_quantity: 1 }] }]);
    expect(scoped.results[0]).toMatchObject({ status: 'error', error: { code: 'FORBIDDEN_STORE' } });

    const readOnly = new IntegrationClient({ apiKey: sandbox.keys.readOnly, baseUrl: sandbox.url, maxRetries: 0 });
    const error = await readOnly.catalog.upsertProducts([{ external_id: 'CONF-4', name: 'x', price: 1 }]).catch((e: { cause?: unknown }) => e.cause);
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect(error).toMatchObject({ requiredScope: 'catalog:write' });
  });

  it('stock: updated, PRODUCT_NOT_FOUND, FORBIDDEN_STORE per item', async () => {
    const [store0, store1] = sandbox.storeIds as [string, string];
    const result = await client.stock.set([
      { external_id: 'CONF-2', store_id: store0, stock_quantity: 5.5, price_override: 19.9 },
      { external_id: 'NOPE-404', store_id: store0, stock_quantity: 1 },
    ]);
    expect(result.results.map((r) => [r.status, r.error?.code])).toEqual([['updated', undefined], ['error', 'PRODUCT_NOT_FOUND']]);
    expect(result.summary).toEqual({ updated: 1, errors: 1 });
    const oneStore = new IntegrationClient({ apiKey: sandbox.keys.oneStore, baseUrl: sandbox.url });
    const scoped = await oneStore.stock.set([{ external_id: 'CONF-2', store_id: store1, stock_quantity: 1 }]);
    expect(scoped.results[0]).toMatchObject({ status: 'error', error: { code: 'FORBIDDEN_STORE' } });
  });

  it('webhooks: create, deliveries signed as the spec says, status change, test, list, delete', async () => {
    const created = await client.webhooks.create({ url: receiverUrl, events: ['order.created', 'order.status_changed'] });
    expect(created.secret).toMatch(/^whsec_/);
    expect(typeof created.warning).toBe('string');
    const listed = await client.webhooks.list();
    expect(listed.find((w) => w.id === created.id)).toMatchObject({ consecutive_failures: 0 });
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const order = sandbox.createOrder({ source_channel: 'marketplace' });
    const delivery = await waitFor(() => received.find((r) => r.body.includes(order.order_id) && r.body.includes('order.created')));
    const event = verifyWebhook(delivery.body, delivery.headers, created.secret) as WebhookEvent;
    expect(event.event).toBe('order.created');
    if (event.event === 'order.created') expect(event.data.order_id).toBe(order.order_id);

    sandbox.setOrderStatus(order.order_id, 'cancelled');
    const change = await waitFor(() => received.find((r) => r.body.includes('order.status_changed') && r.body.includes(order.order_id)));
    const changed = verifyWebhook(change.body, change.headers, created.secret);
    expect(changed.data).toMatchObject({ order_id: order.order_id, previous_status: 'confirmed', status: 'cancelled' });

    expect((await client.orders.get(order.order_id)).status).toBe('cancelled');
    expect((await client.orders.findByExternalId(order.external_order_id!))?.order_id).toBe(order.order_id);
    expect(await client.orders.findByExternalId('NO-SUCH-ORDER')).toBeNull();
    await expect(client.orders.get('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);

    const { delivery_id } = await client.webhooks.test(created.id);
    const test = await waitFor(() => received.find((r) => r.body.includes(delivery_id)));
    expect(verifyWebhook(test.body, test.headers, created.secret).event).toBe('webhook.test');

    const deliveries = await client.webhooks.deliveries(created.id, { limit: 10 });
    expect(deliveries.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(deliveries)).not.toContain('Maria');

    await client.webhooks.delete(created.id);
    await expect(client.webhooks.delete(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('the service itself (raw request) answers a repeated external_id as an item error', async () => {
    const answer = (await client.request({ method: 'POST', path: '/products/bulk', body: { items: [{ external_id: 'RAW-1', name: 'a', price: 1 }, { external_id: 'RAW-1', name: 'b', price: 1 }] } })) as any;
    expect(answer.results[1]).toMatchObject({ index: 1, status: 'error', error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(/duplicated in batch/) } });
    expect(answer.summary).toEqual({ created: 1, updated: 0, errors: 1 });
  });

  it('POST /orders is 404; an unknown event name at registration is a ValidationError', async () => {
    await expect(client.request({ method: 'POST', path: '/orders', body: {} })).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.webhooks.create({ url: receiverUrl, events: ['stock.changed' as never] })).rejects.toBeInstanceOf(ValidationError);
  });

  it('loyalty: balance by phone, idempotent credit, unknown customer', async () => {
    const customer = sandbox.seed.customers[0]!;
    const balance = await client.loyalty.balance({ phone: customer.phone });
    expect(balance.points).toBe(customer.points);
    const credit = await client.loyalty.credit({ phone: customer.phone, points: 5 });
    const again = await client.loyalty.credit({ phone: customer.phone, points: 5, idempotency_key: credit.idempotency_key });
    expect(again.entry.id).toBe(credit.entry.id);
    expect((await client.loyalty.balance({ phone: customer.phone })).points).toBe(customer.points + 5);
    await expect(client.loyalty.balance({ phone: '+55 11 90000-0000' })).rejects.toBeInstanceOf(CustomerNotFoundError);
  });

  it('handle(request) answers without a socket, inside msw', async () => {
    const server = setupServer(http.all('https://platform.example.com/*', ({ request }) => sandbox.handle(request)));
    server.listen({ onUnhandledFrame: 'bypass' });
    try {
      const viaMsw = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: 'https://platform.example.com' });
      await expect(viaMsw.health()).resolves.toMatchObject({ status: 'ok' });
      const direct = await sandbox.handle(new Request(`${sandbox.url}/integration/v1/health`, { headers: { 'X-API-Key': sandbox.apiKey } }));
      expect(direct.status).toBe(200);
    } finally {
      server.close();
    }
  });

  it('anti-SSRF with allowInsecureReceivers: false', async () => {
    const strict = await createSandbox({ allowInsecureReceivers: false });
    try {
      const c = new IntegrationClient({ apiKey: strict.apiKey, baseUrl: strict.url });
      await expect(c.webhooks.create({ url: 'http://erp.example.com/h', events: ['order.created'] })).rejects.toBeInstanceOf(SsrfBlockedError);
      await expect(c.webhooks.create({ url: 'https://127.0.0.1/h', events: ['order.created'] })).rejects.toBeInstanceOf(SsrfBlockedError);
    } finally {
      await strict.close();
    }
  });

  it('rate limit: 429 RATE_LIMITED with Retry-After once the bucket is empty', async () => {
    const limited = await createSandbox();
    try {
      const c = new IntegrationClient({ apiKey: limited.apiKey, baseUrl: limited.url, rateLimit: false, maxRetries: 0 });
      const outcomes = await Promise.allSettled(Array.from({ length: 125 }, () => c.health()));
      const rejected = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
      expect(rejected.length).toBeGreaterThanOrEqual(1);
      expect(rejected[0]).toBeInstanceOf(RateLimitError);
      expect(rejected[0].retryAfterMs).toBeGreaterThanOrEqual(1000);
    } finally {
      await limited.close();
    }
  });

  it('feature flag off: 503 FEATURE_DISABLED, even for health, not retried', async () => {
    const off = await createSandbox();
    try {
      off.setFeatureEnabled(false);
      const c = new IntegrationClient({ apiKey: off.apiKey, baseUrl: off.url });
      await expect(c.health()).rejects.toBeInstanceOf(FeatureDisabledError);
    } finally {
      await off.close();
    }
  });

  it('a forbidden store on coupon redemption is ForbiddenStoreError', async () => {
    const oneStore = new IntegrationClient({ apiKey: sandbox.keys.oneStore, baseUrl: sandbox.url });
    const customer = sandbox.seed.customers[0]!;
    const code = Object.values(sandbox.seed.coupons)[0] as string;
    await expect(oneStore.loyalty.redeemCoupon({ code, phone: customer.phone, store_id: sandbox.storeIds[1]! })).rejects.toBeInstanceOf(ForbiddenStoreError);
  });
});
