/**
 * The retry rules of each call kind (surface "Retries and rate limit", docs/retries-and-rate-limit.md)
 * against real faults of the sandbox, request by request: a scripted random source decides which
 * request fails, so each test says exactly which attempt meets which fault.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import {
  BulkOperationError,
  ConnectionError,
  FeatureDisabledError,
  IntegrationClient,
  InternalServerError,
  TimeoutError,
  type BulkUpsertResult,
  type ProductItem,
} from 'integration-sdk';
import type { FaultKind, Sandbox } from 'integration-sdk/sandbox';
import { clientFor, rejectionOf, ScaledClock, startSandbox } from './helpers.ts';

/**
 * A sandbox whose faults are scripted: `failNext(kind, n)` makes the next `n` requests meet `kind`;
 * every other request is answered normally (docs/sandbox.md: faults without a seed draw from
 * `random`: one draw against the rate, one for the kind).
 */
async function scriptedSandbox() {
  const draws: number[] = [];
  const sandbox = await startSandbox({ random: () => draws.shift() ?? 0.999 });
  return {
    sandbox,
    /** `okFirst` requests answered normally, then `n` meeting `kind`, then `thenOk` normal ones. */
    failNext(kind: FaultKind, n = 1, thenOk = 0, okFirst = 0) {
      sandbox.setFaults({ rate: 0.5, kinds: [kind] });
      draws.length = 0;
      for (let i = 0; i < okFirst; i++) draws.push(0.999);
      for (let i = 0; i < n; i++) draws.push(0, 0);
      for (let i = 0; i < thenOk; i++) draws.push(0.999);
    },
  };
}

describe('webhooks.create and webhooks.test: repeated only when the service certainly did not process them', () => {
  test('503 before processing: retried, one endpoint', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox);
    failNext('error503', 2, 0, 1);
    const created = await client.webhooks.create({ url: 'http://127.0.0.1:9/a', events: ['order.created'] });
    expect(exchanges.map((e) => [e.method, e.status, e.code])).toEqual([['GET', 200, undefined], ['POST', 503, 'AUTH_UNAVAILABLE'], ['POST', 503, 'AUTH_UNAVAILABLE'], ['POST', 201, undefined]]);
    expect((await client.webhooks.list()).map((w) => w.id)).toEqual([created.id]);
  });

  test('500 not processed: thrown after one attempt, nothing registered', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox);
    failNext('error500', 1, 0, 1);
    const error = await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/a', events: ['order.created'] }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(exchanges.filter((e) => e.method === 'POST')).toHaveLength(1);
    expect(await client.webhooks.list()).toEqual([]);
  });

  test('processed, then 500 or a lost answer: thrown after one attempt, and the endpoint it made is deleted (no orphan)', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox);
    // an endpoint of the same URL that was there before the call is not touched
    const kept = await client.webhooks.create({ url: 'http://127.0.0.1:9/a', events: ['order.status_changed'] });
    const earlier = await client.webhooks.create({ url: 'http://127.0.0.1:9/b', events: ['order.created'] });
    exchanges.length = 0;
    failNext('processed500', 1, 0, 1);
    expect(await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/a', events: ['order.created'] }))).toBeInstanceOf(InternalServerError);
    expect(exchanges.map((e) => [e.method, e.path.replace(/\/webhooks\/.+/, '/webhooks/{id}'), e.status])).toEqual([
      ['GET', '/integration/v1/webhooks', 200],
      ['POST', '/integration/v1/webhooks', 500],
      ['GET', '/integration/v1/webhooks', 200],
      ['DELETE', '/integration/v1/webhooks/{id}', 204],
    ]);
    failNext('drop', 1, 0, 1);
    const dropped = await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/c', events: ['order.created'] }));
    expect(dropped).toBeInstanceOf(ConnectionError);
    expect(dropped).not.toBeInstanceOf(TimeoutError);
    expect((await client.webhooks.list()).map((w) => w.id).sort()).toEqual([kept.id, earlier.id].sort());
  });

  test('a create whose answer comes too late: the endpoint the service made is deleted', async () => {
    const { sandbox } = await scriptedSandbox();
    // The service registers the endpoint, but its answer never reaches the client in time.
    const late: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await globalThis.fetch(request);
      if (request.method !== 'POST') return response;
      return new Promise<Response>((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)));
    };
    const { client } = clientFor(sandbox, { timeoutMs: 1000, maxRetries: 0, fetch: late });
    expect(await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/slow', events: ['order.created'] }))).toBeInstanceOf(TimeoutError);
    expect(await client.webhooks.list()).toEqual([]);
  });

  /**
   * A slow service: the POST /webhooks of a create is held (its answer never reaches the client,
   * which times out), and reaches the sandbox, which registers the endpoint, only once the clean-up
   * has listed the endpoints `looksBefore` times and found nothing.
   */
  // The clients below give every request 1 s: the held POST times out then, and the lists before
  // and after it (answered at once by the loopback sandbox) stay well within it on a loaded host
  // (at 200 ms a list before the create timed out in a CI run, and the create threw that instead).
  function slowToRegister(sandbox: Sandbox, looksBefore: number) {
    let held: Request | undefined;
    let looks = 0;
    let registered: Promise<unknown> = Promise.resolve();
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/webhooks') && held === undefined) {
        // Cloned without the signal: the client's abort does not stop the service's work.
        held = new Request(request.url, { method: 'POST', headers: request.headers, body: await request.text() });
        return new Promise<Response>((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)));
      }
      if (held === undefined || request.method !== 'GET') return globalThis.fetch(request);
      await registered; // a registration under way is complete before a later look is answered
      const response = await globalThis.fetch(request);
      if ((looks += 1) === looksBefore) registered = globalThis.fetch(held);
      return response;
    };
    return { fetch, registered: () => registered };
  }

  test('the service registers the endpoint after the clean-up first looked: the second look deletes it', async () => {
    const { sandbox } = await scriptedSandbox();
    const slow = slowToRegister(sandbox, 1);
    const { client } = clientFor(sandbox, { timeoutMs: 1000, maxRetries: 0, fetch: slow.fetch });
    const error = await rejectionOf(client.webhooks.create({ url: 'http://127.0.0.1:9/slow', events: ['order.created'] }));
    expect(error).toBeInstanceOf(TimeoutError);
    await slow.registered();
    expect(await clientFor(sandbox).client.webhooks.list()).toEqual([]);
    expect((error as Error).message).toContain('deleted (no orphan)');
  });

  test('registered after both looks: the error says an endpoint may still appear, and another client’s later create deletes nothing', async () => {
    const { sandbox } = await scriptedSandbox();
    const { client: admin } = clientFor(sandbox);
    const same = (await admin.webhooks.create({ url: 'http://127.0.0.1:9/slow', events: ['order.created', 'order.status_changed'] })).id;
    const slow = slowToRegister(sandbox, 2);
    const { client } = clientFor(sandbox, { timeoutMs: 1000, maxRetries: 0, fetch: slow.fetch });
    const input = { url: 'http://127.0.0.1:9/slow', events: ['order.created', 'order.status_changed'] as const };
    const error = await rejectionOf(client.webhooks.create({ ...input, events: [...input.events] }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/may still register one/);
    await slow.registered();
    // The endpoint that was there before the create, with the same URL and events, was never touched.
    const listed = (await admin.webhooks.list()).filter((endpoint) => endpoint.url === input.url);
    expect(listed.map((endpoint) => endpoint.id)).toContain(same);
    expect(listed).toHaveLength(2);
    const again = await admin.webhooks.create({ url: input.url, events: ['order.status_changed', 'order.created'] });
    expect((await admin.webhooks.list()).map((endpoint) => endpoint.id)).toEqual(expect.arrayContaining([same, again.id]));
  });

  test('registered after both looks: the same client’s next create deletes it first, and the caller ends with one endpoint', async () => {
    const { sandbox } = await scriptedSandbox();
    const slow = slowToRegister(sandbox, 2);
    const { client } = clientFor(sandbox, { timeoutMs: 1000, maxRetries: 0, fetch: slow.fetch });
    const input = { url: 'http://127.0.0.1:9/late', events: ['order.created' as const] };
    const error = await rejectionOf(client.webhooks.create(input));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/may still register one: this client's next webhooks.create or webhooks.list within 10 minutes deletes it/);
    await slow.registered();
    const { client: admin } = clientFor(sandbox);
    const [late] = await admin.webhooks.list();
    expect(late).toMatchObject(input); // the service did register it, after the client gave up

    const again = await client.webhooks.create(input);
    expect((await admin.webhooks.list()).map((endpoint) => endpoint.id)).toEqual([again.id]);
    expect(again.id).not.toBe(late!.id);
  });

  test('registered after the client created again: its next list deletes the late one, keeping the one it holds the secret of and one there before', async () => {
    const { sandbox } = await scriptedSandbox();
    const input = { url: 'http://127.0.0.1:9/late', events: ['order.created' as const, 'order.status_changed' as const] };
    const { client: admin } = clientFor(sandbox);
    const before = await admin.webhooks.create(input); // same URL and events, registered on purpose earlier
    // The failed create's two looks, the next create's own look, a list: only then does the service register the held one.
    const slow = slowToRegister(sandbox, 4);
    const { client } = clientFor(sandbox, { timeoutMs: 1000, maxRetries: 0, fetch: slow.fetch });
    expect(await rejectionOf(client.webhooks.create(input))).toBeInstanceOf(TimeoutError);
    const again = await client.webhooks.create({ ...input, events: ['order.status_changed', 'order.created'] });
    expect((await client.webhooks.list()).map((endpoint) => endpoint.id)).toEqual([before.id, again.id]);
    await slow.registered();
    const all = (await admin.webhooks.list()).map((endpoint) => endpoint.id);
    expect(all.slice(0, 2)).toEqual([before.id, again.id]); // the late one is listed last, after the one the client holds

    expect((await client.webhooks.list()).map((endpoint) => endpoint.id)).toEqual([before.id, again.id]);
    expect((await admin.webhooks.list()).map((endpoint) => endpoint.id)).toEqual([before.id, again.id]);
    // Settled: a later list of the same client deletes nothing more.
    expect(await client.webhooks.list()).toHaveLength(2);
  });

  test('webhooks.test with a lost answer: not repeated, exactly one test delivery', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const { id } = await client.webhooks.create({ url: 'http://127.0.0.1:9/a', events: ['order.created'] });
    failNext('drop');
    expect(await rejectionOf(client.webhooks.test(id))).toBeInstanceOf(ConnectionError);
    expect(exchanges.map((e) => [e.method, e.status])).toEqual([['GET', 200], ['POST', 201], ['POST', 'dropped']]);
    expect(sandbox.deliveries({ webhookId: id }).map((d) => d.event)).toEqual(['webhook.test']);
  });

  test('webhooks.delete retried after a lost answer meets 404 and resolves', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox);
    const { id } = await client.webhooks.create({ url: 'http://127.0.0.1:9/a', events: ['order.created'] });
    failNext('processed500');
    await expect(client.webhooks.delete(id)).resolves.toBeUndefined();
    expect(exchanges.slice(2).map((e) => [e.method, e.status])).toEqual([['DELETE', 500], ['DELETE', 404]]);
    expect(await client.webhooks.list()).toEqual([]);
  });
});

describe('reads and idempotent writes are retried through every fault', () => {
  test('orders.get, validateCoupon: retried after 500, 503, 429, processed 500 and a lost answer', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    // The client's time runs 20× faster: the 1 s Retry-After of the 429 takes 50 ms.
    const { client, exchanges } = clientFor(sandbox, { maxRetries: 1, clock: new ScaledClock(20), timeoutMs: 200_000 });
    const order = sandbox.createOrder();
    for (const kind of ['error500', 'error503', 'error429', 'processed500', 'drop'] as const) {
      failNext(kind);
      expect((await client.orders.get(order.order_id)).order_id).toBe(order.order_id);
      failNext(kind);
      expect((await client.loyalty.validateCoupon({ code: 'WELCOME10' })).discount).toBe(10);
    }
    expect(exchanges).toHaveLength(20);
    expect(exchanges.filter((_, i) => i % 2 === 1).map((e) => e.status)).toEqual(Array(10).fill(200));
  });

  test('debit and redeemCoupon with lost answers: one write each, the same key on every attempt', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox, { randomUUID: () => 'made-by-the-sdk-once' });
    failNext('drop', 2);
    const debit = await client.loyalty.debit({ external_id: 'CUST-001', points: 120 });
    expect(debit).toMatchObject({ balance: 380, idempotency_key: 'made-by-the-sdk-once', entry: { type: 'debit', points: 120 } });
    expect(exchanges.map((e) => [e.status, (e.body as { idempotency_key: string }).idempotency_key])).toEqual([
      ['dropped', 'made-by-the-sdk-once'], ['dropped', 'made-by-the-sdk-once'], [200, 'made-by-the-sdk-once'],
    ]);
    failNext('processed500');
    const redeemed = await client.loyalty.redeemCoupon({ code: 'WELCOME10', phone: '+5511987654321', store_id: sandbox.storeIds[0] as string, idempotency_key: 'redeem-1001' });
    expect(exchanges.slice(3).map((e) => e.status)).toEqual([500, 200]);
    // The stored redemption is the one returned: a replay with the key gives the same id.
    const replay = await client.loyalty.redeemCoupon({ code: 'WELCOME10', phone: '+5511987654321', store_id: sandbox.storeIds[0] as string, idempotency_key: 'redeem-1001' });
    expect(replay.redemption).toEqual(redeemed.redemption);
    expect((await client.loyalty.balance({ external_id: 'CUST-001' })).points).toBe(380);
  });

  test('maxRetries per call: 0 throws the first fault', async () => {
    const { sandbox, failNext } = await scriptedSandbox();
    const { client, exchanges } = clientFor(sandbox);
    failNext('error503');
    expect(await rejectionOf(client.health({ maxRetries: 0 }))).toMatchObject({ status: 503, code: 'AUTH_UNAVAILABLE' });
    expect(exchanges).toHaveLength(1);
  });
});

describe('no answer at all', () => {
  test('a refused connection is retried (never connected) and ends as ConnectionError with the socket code', async () => {
    // A port that was free a moment ago and nothing listens on now.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const attempts: string[] = [];
    const client = new IntegrationClient({
      apiKey: 'service_sbxfull01_5f0c9a3e7b2d4c18a6e1f9b0d3c7a254',
      baseUrl: `http://127.0.0.1:${port}`,
      random: () => 0,
      rateLimit: false,
      fetch: (input, init) => {
        const request = new Request(input, init);
        attempts.push(request.method);
        return globalThis.fetch(request);
      },
    });
    // Even an unsafe POST is repeated: the service cannot have seen it.
    const error = await rejectionOf(client.webhooks.test('w1'));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(attempts).toEqual(['POST', 'POST', 'POST', 'POST']);
    expect(JSON.stringify(error)).not.toContain('5f0c9a3e7b2d4c18a6e1f9b0d3c7a254');
  });
});

describe('a bulk write that fails part-way', () => {
  test('BulkOperationError.partial holds exactly the items the sandbox wrote', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const items: ProductItem[] = Array.from({ length: 1_000 }, (_, i) => ({ external_id: `P-${i}`, name: `P ${i}`, price: i }));
    // The integration is switched off after the second batch has been answered.
    const error = await rejectionOf(
      client.catalog.upsertProducts(items, { batchSize: 200, onProgress: (p) => p.batchesDone === 2 && sandbox.setFeatureEnabled(false) }),
    );
    expect(error).toBeInstanceOf(BulkOperationError);
    expect((error as BulkOperationError).cause).toBeInstanceOf(FeatureDisabledError);
    const partial = (error as BulkOperationError).partial as BulkUpsertResult;
    const written = new Set(partial.results.filter((r) => r.status === 'created').map((r) => r.external_id));
    expect(written.size).toBeGreaterThanOrEqual(400);
    expect(partial.results.map((r) => r.index)).toEqual([...Array(partial.results.length).keys()]);
    expect(partial.summary).toEqual({ created: written.size, updated: 0, errors: 0 });
    expect(partial.sync_ids).toHaveLength(written.size / 200);
    expect(items.filter((item) => sandbox.getProduct(item.external_id) !== undefined).map((i) => i.external_id)).toEqual([...written]);
  });
});
