import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox, type SandboxLogEntry } from 'integration-sdk/sandbox';
import { api, startReceiver } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function logged(options: Parameters<typeof createSandbox>[0] = {}): Promise<{ sandbox: Sandbox; entries: SandboxLogEntry[] }> {
  const entries: SandboxLogEntry[] = [];
  const sandbox = await createSandbox({ rate: false, ...options, log: (entry) => entries.push(entry) });
  cleanups.push(sandbox.close);
  return { sandbox, entries };
}

describe('createSandbox({ log })', () => {
  test('one entry per request: method, route template, status, ms; never an id, a query value or a key', async () => {
    const { sandbox, entries } = await logged();
    const order = sandbox.createOrder();
    await api(sandbox)('GET', `/orders/${order.order_id}`);
    await api(sandbox)('GET', '/loyalty/balance?phone=%2B5511987654321');
    await api(sandbox, null)('GET', '/health');
    await api(sandbox)('GET', '/customers/5511987654321/orders');
    await sandbox.handle(new Request('http://any/integration/v1/health', { headers: { 'x-api-key': sandbox.apiKey } }));
    expect(entries).toEqual([
      { type: 'request', method: 'GET', route: '/integration/v1/orders/:id', status: 200, ms: expect.any(Number) },
      { type: 'request', method: 'GET', route: '/integration/v1/loyalty/balance', status: 200, ms: expect.any(Number) },
      { type: 'request', method: 'GET', route: '/integration/v1/health', status: 401, ms: expect.any(Number) },
      { type: 'request', method: 'GET', route: '/integration/v1/{…}/{…}/orders', status: 404, ms: expect.any(Number) },
      { type: 'request', method: 'GET', route: '/integration/v1/health', status: 200, ms: expect.any(Number) },
    ]);
    const text = JSON.stringify(entries);
    for (const secret of [order.order_id, '5511987654321', sandbox.apiKey, 'sbxfull01']) expect(text).not.toContain(secret);
  });

  test('a dropped answer is logged with status null', async () => {
    const { sandbox, entries } = await logged({ faults: { rate: 1, seed: 1, kinds: ['drop'] } });
    await expect(api(sandbox)('GET', '/health')).rejects.toThrow();
    expect(entries).toEqual([expect.objectContaining({ route: '/integration/v1/health', status: null })]);
  });

  test('one entry per delivery attempt: event, endpoint without query, status, attempt n/6, outcome, until dead', async () => {
    const { sandbox, entries } = await logged({ timeScale: 0.00001 });
    const receiver = await startReceiver(() => 500);
    cleanups.push(receiver.close);
    const created = await api(sandbox)('POST', '/webhooks', { url: `${receiver.url}?token=abc`, events: ['order.created'] });
    sandbox.createOrder();
    await sandbox.idle();
    const attempts = entries.filter((e) => e.type === 'delivery');
    expect(attempts.map((e) => [e.attempt, e.status, e.outcome])).toEqual([
      [1, 500, 'retrying'], [2, 500, 'retrying'], [3, 500, 'retrying'], [4, 500, 'retrying'], [5, 500, 'retrying'], [6, 500, 'dead'],
    ]);
    expect(attempts[0]).toEqual({
      type: 'delivery', event: 'order.created', deliveryId: sandbox.deliveries()[0]?.id, webhookId: created.body.id, endpoint: receiver.url,
      attempt: 1, maxAttempts: 6, status: 500, outcome: 'retrying', error: expect.stringMatching(/answered 500/), retryInMs: 60_000 * 0.00001,
    });
    expect(attempts[5]).toMatchObject({ retryInMs: null });
    const text = JSON.stringify(entries);
    expect(text).not.toContain('token=abc');
    expect(text).not.toContain(created.body.secret);
    expect(text).not.toContain('Maria');
  });

  test('a delivered attempt and a refused connection', async () => {
    const { sandbox, entries } = await logged();
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    await api(sandbox)('POST', '/webhooks', { url: receiver.url, events: ['order.created'] });
    await api(sandbox)('POST', '/webhooks', { url: 'http://127.0.0.1:9/down', events: ['order.created'] });
    sandbox.createOrder();
    await Promise.all(sandbox.deliveries().map((d) => sandbox.waitForDelivery(d.id, (v) => v.status !== 'pending')));
    const attempts = entries.filter((e) => e.type === 'delivery');
    expect(attempts).toEqual(expect.arrayContaining([
      expect.objectContaining({ endpoint: receiver.url, status: 200, outcome: 'delivered', error: null, retryInMs: null }),
      expect.objectContaining({ endpoint: 'http://127.0.0.1:9/down', status: null, outcome: 'retrying', error: expect.stringMatching(/connection failed/), retryInMs: 60_000 }),
    ]));
  });

  test('a logger that throws stops neither requests nor deliveries', async () => {
    const receiver = await startReceiver();
    const sandbox = await createSandbox({ rate: false, log: () => { throw new Error('logger down'); } });
    cleanups.push(receiver.close, sandbox.close);
    expect((await api(sandbox)('POST', '/webhooks', { url: receiver.url, events: ['order.created'] })).status).toBe(201);
    sandbox.createOrder();
    await sandbox.idle();
    expect(sandbox.deliveries()[0]?.status).toBe('delivered');
  });
});
