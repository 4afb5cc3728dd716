/**
 * Every resource of the SDK through the real client against a real sandbox socket (issue 4 part 7,
 * item 1). Expected values come from the specification, the wire assumptions and the sandbox's
 * documented seed, never from the code.
 */
import { describe, expect, test } from 'vitest';
import type { BatchResult, ProductItem } from 'integration-sdk';
import { clientFor, startSandbox } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_SCOPES = ['catalog:write', 'stock:write', 'orders:read', 'webhooks:manage', 'loyalty:read', 'loyalty:write'];

describe('health', () => {
  test('the full key sees every store and scope; the one-store key only its store', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const health = await client.health();
    expect(health).toEqual({ status: 'ok', merchant_id: sandbox.merchantId, store_ids: [], scopes: ALL_SCOPES, ts: expect.stringMatching(ISO_MS) });
    expect(exchanges).toMatchObject([{ method: 'GET', path: '/integration/v1/health', status: 200 }]);

    const oneStore = clientFor(sandbox, { apiKey: sandbox.keys.oneStore }).client;
    expect(await oneStore.health()).toMatchObject({ store_ids: [sandbox.storeIds[0]], scopes: ALL_SCOPES });
    const readOnly = clientFor(sandbox, { apiKey: sandbox.keys.readOnly }).client;
    expect((await readOnly.health()).scopes).toEqual(['orders:read', 'loyalty:read']);
  });
});

describe('catalog', () => {
  test('upsertProducts creates, then updates, and the sandbox stores exactly what was sent', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const [storeA, storeB] = sandbox.storeIds as [string, string];
    const items: ProductItem[] = [
      { external_id: 'E2E-1', name: 'Farinha 1 kg', price: 6.49, gtin: '7890000000017', category: 'Mercearia', stores: [{ store_id: storeA, stock_quantity: 12.345, price_override: 5.99, active: true }] },
      { external_id: 'E2E-2', name: 'Sal', price: 2, gtin: '12345', category: 'Mercearia' },
      { external_id: 'SKU-1001', price: 26.5 },
    ];
    const first = await client.catalog.upsertProducts(items);
    expect(first.summary).toEqual({ created: 2, updated: 1, errors: 0 });
    expect(first.results).toEqual([
      { index: 0, external_id: 'E2E-1', status: 'created' },
      { index: 1, external_id: 'E2E-2', status: 'created' },
      { index: 2, external_id: 'SKU-1001', status: 'updated' },
    ]);
    expect(first.sync_ids).toEqual([expect.stringMatching(UUID)]);
    expect(sandbox.getProduct('E2E-1')).toEqual({
      external_id: 'E2E-1', name: 'Farinha 1 kg', price: 6.49, gtin: '7890000000017', category: 'Mercearia',
      stores: { [storeA]: { stock_quantity: 12.345, price_override: 5.99, active: true } },
    });
    // Spec 4.2 rule 4: a gtin of 5 characters or fewer is stored as null.
    expect(sandbox.getProduct('E2E-2')).toMatchObject({ gtin: null, price: 2, stores: {} });
    // An update without name keeps the stored name (wire assumption).
    expect(sandbox.getProduct('SKU-1001')).toMatchObject({ name: 'Café torrado 500 g', price: 26.5 });

    const second = await client.catalog.upsertProducts([{ external_id: 'E2E-2', stores: [{ store_id: storeB, stock_quantity: -1.5, active: false }] }]);
    expect(second.results).toEqual([{ index: 0, external_id: 'E2E-2', status: 'updated' }]);
    expect(sandbox.getProduct('E2E-2')?.stores).toEqual({ [storeB]: { stock_quantity: -1.5, price_override: null, active: false } });
  });

  test('upsertBatches streams an async iterable in windows with global indexes', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    async function* erpCursor(): AsyncGenerator<ProductItem> {
      for (let i = 0; i < 5; i++) yield { external_id: `STREAM-${i}`, name: `Item ${i}`, price: i };
      yield { external_id: 'STREAM-1', name: 'repeat', price: 9 };
    }
    const batches: BatchResult[] = [];
    for await (const batch of client.catalog.upsertBatches(erpCursor(), { batchSize: 2 })) batches.push(batch);
    expect(batches.map((b) => b.results.map((r) => [r.index, r.external_id, r.status]))).toEqual([
      [[0, 'STREAM-0', 'created'], [1, 'STREAM-1', 'created']],
      [[2, 'STREAM-2', 'created'], [3, 'STREAM-3', 'created']],
      [[4, 'STREAM-4', 'created'], [5, 'STREAM-1', 'error']],
    ]);
    expect(batches[2]?.results[1]?.error?.code).toBe('VALIDATION_ERROR');
    expect(batches.map((b) => b.summary)).toEqual([
      { created: 2, updated: 0, errors: 0 }, { created: 2, updated: 0, errors: 0 }, { created: 1, updated: 0, errors: 1 },
    ]);
    // The repeat was rejected locally and never sent: three requests of 2, 2 and 1 items.
    expect(exchanges.map((e) => (e.body as { items: unknown[] }).items.length)).toEqual([2, 2, 1]);
    expect(sandbox.getProduct('STREAM-1')).toMatchObject({ name: 'Item 1', price: 1 });
  });
});

describe('stock', () => {
  test('stock.set writes absolute stock, removes a price_override with null, and sets active', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const [storeA, storeB] = sandbox.storeIds as [string, string];
    await client.catalog.upsertProducts([{ external_id: 'SKU-1002', stores: [{ store_id: storeA, price_override: 44.9 }] }]);
    expect(sandbox.getProduct('SKU-1002')?.stores[storeA]?.price_override).toBe(44.9);

    const result = await client.stock.set([
      { external_id: 'SKU-1002', store_id: storeA, stock_quantity: 7.125, price_override: null },
      { external_id: 'SKU-1003', store_id: storeB, stock_quantity: 3, active: false },
    ]);
    expect(result.summary).toEqual({ updated: 2, errors: 0 });
    expect(result.results).toEqual([
      { index: 0, external_id: 'SKU-1002', store_id: storeA, status: 'updated' },
      { index: 1, external_id: 'SKU-1003', store_id: storeB, status: 'updated' },
    ]);
    expect(result.sync_ids).toEqual([expect.stringMatching(UUID)]);
    expect(sandbox.getProduct('SKU-1002')?.stores[storeA]).toEqual({ stock_quantity: 7.125, price_override: null, active: true });
    expect(sandbox.getProduct('SKU-1003')?.stores[storeB]).toEqual({ stock_quantity: 3, price_override: null, active: false });
    // The other store of SKU-1003 is untouched (seed: 40 in the first store).
    expect(sandbox.getProduct('SKU-1003')?.stores[storeA]).toEqual({ stock_quantity: 40, price_override: null, active: true });
  });
});

describe('orders', () => {
  test('orders.get returns the order of spec 2.7 plus updated_at; findByExternalId finds marketplace orders', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const native = sandbox.createOrder();
    const marketplace = sandbox.createOrder({ source_channel: 'marketplace', store_id: sandbox.storeIds[1], items: [{ external_id: 'SKU-1003', quantity: 4 }] });
    expect(marketplace.external_order_id).toBe(`MKT-${marketplace.display_number}`);

    const read = await client.orders.get(native.order_id);
    expect(read).toEqual({ ...native, updated_at: expect.stringMatching(ISO_MS) });
    expect(read.external_order_id).toBeNull();

    expect(await client.orders.findByExternalId(`MKT-${marketplace.display_number}`)).toEqual({ ...marketplace, updated_at: expect.stringMatching(ISO_MS) });
    expect(await client.orders.findByExternalId('MKT-does-not-exist')).toBeNull();
    expect(exchanges.map((e) => [e.path, e.query, e.status])).toEqual([
      [`/integration/v1/orders/${native.order_id}`, '', 200],
      ['/integration/v1/orders', `?external_order_id=MKT-${marketplace.display_number}`, 200],
      ['/integration/v1/orders', '?external_order_id=MKT-does-not-exist', 404],
    ]);

    sandbox.setOrderStatus(native.order_id, 'cancelled');
    expect((await client.orders.get(native.order_id)).status).toBe('cancelled');
  });
});

describe('webhook endpoints', () => {
  test('create, list, test, deliveries, delete', async () => {
    const sandbox = await startSandbox({ timeScale: 0.00001 });
    const { client } = clientFor(sandbox);
    // Nothing listens on port 9 of loopback: every delivery attempt is refused.
    const created = await client.webhooks.create({ url: 'http://127.0.0.1:9/hooks', events: ['order.created', 'order.status_changed'] });
    expect(created).toEqual({
      id: expect.stringMatching(UUID), url: 'http://127.0.0.1:9/hooks', events: ['order.created', 'order.status_changed'],
      secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/), warning: expect.any(String), created_at: expect.stringMatching(ISO_MS),
    });
    const second = await client.webhooks.create({ url: 'http://127.0.0.1:9/other', events: ['order.status_changed'] });

    const listed = await client.webhooks.list();
    expect(listed).toEqual([
      { id: created.id, url: created.url, events: created.events, consecutive_failures: 0, created_at: created.created_at },
      { id: second.id, url: second.url, events: ['order.status_changed'], consecutive_failures: 0, created_at: second.created_at },
    ]);
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    const { delivery_id } = await client.webhooks.test(created.id);
    expect(delivery_id).toMatch(UUID);
    await sandbox.idle();
    const log = await client.webhooks.deliveries(created.id, { limit: 5 });
    expect(log).toEqual([
      {
        id: delivery_id, event: 'webhook.test', status: 'dead', attempt_count: 6, response_status: null,
        last_error: expect.any(String), created_at: expect.stringMatching(ISO_MS), next_attempt_at: null,
      },
    ]);
    expect((await client.webhooks.list()).map((w) => w.consecutive_failures)).toEqual([6, 0]);

    await client.webhooks.delete(created.id);
    expect((await client.webhooks.list()).map((w) => w.id)).toEqual([second.id]);
  });
});

describe('loyalty', () => {
  test('program, balance (phone with or without the ninth digit, or external_id), statement', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    expect(await client.loyalty.program()).toEqual(sandbox.seed.program);
    expect(await client.loyalty.program()).toMatchObject({ name: 'Sandbox Rewards', active: true, points_per_currency: 1, currency_per_point: 0.05 });

    const maria = { id: '6f1e2d3c-4b5a-4697-8877-665544332211', name: 'Maria Silva', phone: '+5511987654321', external_id: 'CUST-001' };
    expect(await client.loyalty.balance({ phone: '+55 (11) 98765-4321' })).toEqual({ customer: maria, points: 500, program_id: sandbox.seed.program.id });
    expect(await client.loyalty.balance({ phone: '1187654321' })).toMatchObject({ customer: { external_id: 'CUST-001' }, points: 500 });
    expect(await client.loyalty.balance({ external_id: 'CUST-002' })).toMatchObject({ customer: { name: 'João Souza' }, points: 40 });
    // Ana is stored in the old 8-digit form; the 9-digit form finds her.
    expect(await client.loyalty.balance({ phone: '11 98123-4567' })).toMatchObject({ customer: { external_id: 'CUST-003' }, points: 0 });

    const statement = await client.loyalty.statement({ external_id: 'CUST-001' }, { limit: 10 });
    expect(statement).toEqual({
      customer: maria,
      points: 500,
      entries: [{ id: expect.any(String), type: 'credit', points: 500, description: 'Sandbox opening balance', created_at: expect.stringMatching(ISO_MS), idempotency_key: null }],
    });
  });

  test('credit and debit: idempotent through idempotency_key (given or made by the SDK)', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const credited = await client.loyalty.credit({ external_id: 'CUST-002', points: 25, description: 'Pedido 1001' });
    expect(credited.idempotency_key).toMatch(UUID_V4);
    expect(credited.balance).toBe(65);
    expect(credited.entry).toMatchObject({ type: 'credit', points: 25, description: 'Pedido 1001', idempotency_key: credited.idempotency_key });
    expect(exchanges.at(-1)?.body).toEqual({ external_id: 'CUST-002', points: 25, description: 'Pedido 1001', idempotency_key: credited.idempotency_key });

    // The same key again: the original entry, no second credit.
    const again = await client.loyalty.credit({ external_id: 'CUST-002', points: 25, idempotency_key: credited.idempotency_key });
    expect(again).toEqual({ entry: credited.entry, balance: 65, idempotency_key: credited.idempotency_key });
    expect(exchanges.at(-1)?.status).toBe(200);

    const debited = await client.loyalty.debit({ phone: '21 99876-5432', points: 15, idempotency_key: 'refund-1001' });
    expect(debited).toMatchObject({ balance: 50, idempotency_key: 'refund-1001', entry: { type: 'debit', points: 15, idempotency_key: 'refund-1001' } });
    expect(await client.loyalty.debit({ phone: '21 99876-5432', points: 15, idempotency_key: 'refund-1001' })).toMatchObject({ balance: 50, entry: debited.entry });
    expect((await client.loyalty.balance({ external_id: 'CUST-002' })).points).toBe(50);
    const statement = await client.loyalty.statement({ external_id: 'CUST-002' });
    expect(statement.entries.map((e) => [e.type, e.points])).toEqual([['debit', 15], ['credit', 25], ['credit', 40]]);
  });

  test('validateCoupon (fixed and percent) and redeemCoupon, idempotent', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const [storeA] = sandbox.storeIds as [string];
    expect(await client.loyalty.validateCoupon({ code: 'welcome10', phone: '+5511987654321', store_id: storeA, order_total: 120 })).toEqual({
      valid: true, coupon: { code: 'WELCOME10', type: 'fixed', value: 10, expires_at: null }, discount: 10,
    });
    expect(await client.loyalty.validateCoupon({ code: 'SAVE15', order_total: 99.99 })).toEqual({
      valid: true, coupon: { code: 'SAVE15', type: 'percent', value: 15, expires_at: '2099-12-31T23:59:59.000Z' }, discount: 15,
    });

    const redeemed = await client.loyalty.redeemCoupon({ code: 'WELCOME10', external_id: 'CUST-001', store_id: storeA });
    expect(redeemed).toEqual({
      redemption: { id: expect.any(String), code: 'WELCOME10', discount: 10, created_at: expect.stringMatching(ISO_MS) },
      idempotency_key: expect.stringMatching(UUID_V4),
    });
    const replay = await client.loyalty.redeemCoupon({ code: 'WELCOME10', external_id: 'CUST-001', store_id: storeA, idempotency_key: redeemed.idempotency_key });
    expect(replay.redemption).toEqual(redeemed.redemption);
  });
});

describe('client.request', () => {
  test('an unwrapped route through the same auth and mapping: parsed JSON back, query sent', async () => {
    const sandbox = await startSandbox();
    const { client, exchanges } = clientFor(sandbox);
    expect(await client.request({ method: 'GET', path: '/loyalty/program' })).toEqual(sandbox.seed.program);
    const statement = await client.request({ method: 'GET', path: '/integration/v1/loyalty/statement', query: { external_id: 'CUST-002', limit: 1, phone: undefined } });
    expect(statement).toMatchObject({ points: 40, entries: [{ type: 'credit', points: 40 }] });
    expect(exchanges.map((e) => [e.method, e.path, e.query, e.status])).toEqual([
      ['GET', '/integration/v1/loyalty/program', '', 200],
      ['GET', '/integration/v1/loyalty/statement', '?external_id=CUST-002&limit=1', 200],
    ]);
    // A 204 answers undefined.
    const { id } = await client.webhooks.create({ url: 'http://127.0.0.1:9/x', events: ['order.created'] });
    expect(await client.request({ method: 'DELETE', path: `/webhooks/${id}` })).toBeUndefined();
    expect(await client.webhooks.list()).toEqual([]);
  });
});
