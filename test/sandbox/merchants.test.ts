// The sandbox serving many merchants: each key sees its own merchant, stores, orders and endpoints;
// merchants and keys are added and keys revoked by option, by method and by the /_sandbox controls.
import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOptions } from 'integration-sdk/sandbox';
import { api, ManualClock, startReceiver } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox({ rate: false, ...options });
  cleanups.push(sandbox.close);
  return sandbox;
}

function control(sandbox: Sandbox) {
  return async (path: string, body?: unknown) => {
    const response = await fetch(`${sandbox.url}/_sandbox${path}`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.full, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (await response.json()) as any };
  };
}

describe('a sandbox with many merchants', () => {
  test('each key answers its own merchant and stores, and reads and writes only them', async () => {
    const sandbox = await start({ merchants: [{ stores: 2 }, { keys: [{ scopes: ['orders:read'] }, { storeIds: [0] }] }] });
    const [a, b] = sandbox.merchants;
    expect(sandbox.merchants).toHaveLength(2);
    expect(sandbox.storeIds).toHaveLength(3); // the seeded merchant's, as before
    expect(a!.storeIds).toHaveLength(2);
    expect(b!.keys.map((key) => key.scopes)).toEqual([['orders:read'], expect.arrayContaining(['webhooks:manage'])]);
    expect(b!.keys[1]!.storeIds).toEqual([b!.storeIds[0]]);

    const health = await api(sandbox, a!.keys[0]!.apiKey)('GET', '/health');
    expect(health.body).toMatchObject({ merchant_id: a!.merchantId, store_ids: [] });
    expect((await api(sandbox, b!.keys[0]!.apiKey)('GET', '/health')).body.merchant_id).toBe(b!.merchantId);
    expect((await api(sandbox)('GET', '/health')).body.merchant_id).toBe(sandbox.merchantId);

    const order = sandbox.createOrder({ store_id: a!.storeIds[1] });
    expect((await api(sandbox, a!.keys[0]!.apiKey)('GET', `/orders/${order.order_id}`)).status).toBe(200);
    expect((await api(sandbox, b!.keys[0]!.apiKey)('GET', `/orders/${order.order_id}`)).status).toBe(404);
    expect((await api(sandbox)('GET', `/orders/${order.order_id}`)).status).toBe(404);

    const stock = await api(sandbox, a!.keys[0]!.apiKey)('PATCH', '/stock', { items: [{ external_id: 'SKU-1001', store_id: sandbox.storeIds[0], stock_quantity: 1 }] });
    expect(stock.body.results[0].error.code).toBe('FORBIDDEN_STORE');
  });

  test("orders reach only their merchant's endpoints, and each key has its own five", async () => {
    const sandbox = await start({ merchants: [{}, {}] });
    const [a, b] = sandbox.merchants;
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    for (const merchant of [a!, b!]) {
      const register = () => api(sandbox, merchant.keys[0]!.apiKey)('POST', '/webhooks', { url: `${receiver.url}/${merchant.merchantId}`, events: ['order.created'] });
      for (let i = 0; i < 5; i++) expect((await register()).status).toBe(201);
      expect((await register()).body.error.code).toBe('WEBHOOK_LIMIT_REACHED');
      expect((await api(sandbox, merchant.keys[0]!.apiKey)('GET', '/webhooks')).body.data).toHaveLength(5);
    }
    sandbox.createOrder({ store_id: b!.storeIds[0] });
    await sandbox.idle();
    expect(receiver.received).toHaveLength(5);
    expect(receiver.received.every((delivery) => delivery.headers.host !== undefined && JSON.parse(delivery.rawBody).data.store_id === b!.storeIds[0])).toBe(true);
    expect(sandbox.deliveries().length).toBe(5);
  });

  test('the controls add a merchant and a key, and revoke a key: its next request answers 401, the others go on', async () => {
    const sandbox = await start();
    const created = await control(sandbox)('/merchants', { stores: [{ name: 'Loja Sul' }], keys: [{ scopes: ['orders:read', 'webhooks:manage'] }] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ merchant_id: expect.any(String), stores: [{ name: 'Loja Sul' }], keys: [{ key_id: expect.any(String), scopes: ['orders:read', 'webhooks:manage'], store_ids: [] }] });
    const first = created.body.keys[0];
    const added = await control(sandbox)(`/merchants/${created.body.merchant_id}/keys`, { store_ids: [created.body.stores[0].id] });
    expect(added).toMatchObject({ status: 201, body: { store_ids: [created.body.stores[0].id] } });
    expect(sandbox.merchants[0]!.keys.map((key) => key.keyId)).toEqual([first.key_id, added.body.key_id]);

    expect((await api(sandbox, first.api_key)('GET', '/health')).status).toBe(200);
    expect(await control(sandbox)(`/keys/${first.key_id}/revoke`)).toEqual({ status: 200, body: { key_id: first.key_id, revoked: true } });
    const refused = await api(sandbox, first.api_key)('GET', '/health');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
    expect((await api(sandbox, added.body.api_key)('GET', '/health')).body.merchant_id).toBe(created.body.merchant_id);
    expect((await control(sandbox)('/keys/nokey/revoke')).status).toBe(404);
    expect((await control(sandbox)('/merchants', { stores: 0 })).body.error.details[0]).toMatchObject({ path: 'stores' });
    expect((await control(sandbox)(`/merchants/${created.body.merchant_id}/keys`, { store_ids: [sandbox.storeIds[0]] })).status).toBe(400);
  });

  test('the per-IP bucket (300) is on by default: keys of three merchants together meet it', async () => {
    // Time stands still: no token comes back while the 301 requests are made.
    const sandbox = await createSandbox({ merchants: [{}, {}, {}], clock: new ManualClock() });
    cleanups.push(sandbox.close);
    const keys = sandbox.merchants.map((merchant) => merchant.keys[0]!.apiKey);
    const statuses: number[] = [];
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(keys.flatMap((key) => Array.from({ length: 10 }, () => api(sandbox, key)('GET', '/health'))));
      statuses.push(...answers.map((answer) => answer.status));
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(300);
    const limited = await api(sandbox, keys[0]!)('GET', '/health');
    expect(limited.status).toBe(429);
    expect(limited.body.error.message).toMatch(/caller IP/);
  });
});
