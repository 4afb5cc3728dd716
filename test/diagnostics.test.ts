// The call and attempt channels as a tracer sees them: a real diagnostics_channel subscriber.
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AttemptContext, CallContext } from '../src/diagnostics.ts';
import { API_KEY, ENTRY, HEALTH, ORDER, PHONE, SECRET_PART, envelope, fakeService, json, makeClient, settle } from './support/fake-service.ts';

interface Seen {
  calls: CallContext[];
  attempts: AttemptContext[];
}

/** Subscribes to both channels for one test; contexts are collected when they end. */
function subscribe(): Seen & { stop: () => void } {
  const seen: Seen = { calls: [], attempts: [] };
  const call = tracingChannel<unknown, CallContext>('integration-sdk:call');
  const attempt = tracingChannel<unknown, AttemptContext>('integration-sdk:attempt');
  const onCall = { asyncEnd: (context: CallContext) => void seen.calls.push(context), error: () => {} };
  const onAttempt = { asyncEnd: (context: AttemptContext) => void seen.attempts.push(context), error: () => {} };
  call.subscribe(onCall as never);
  attempt.subscribe(onAttempt as never);
  return { ...seen, stop: () => (call.unsubscribe(onCall as never), attempt.unsubscribe(onAttempt as never)) };
}

let seen: ReturnType<typeof subscribe>;
beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-24T12:00:00Z') });
  seen = subscribe();
});
afterEach(() => {
  seen.stop();
  vi.useRealTimers();
});

/** A context's own fields, without the error object (which has its own redaction tests). */
const fieldsOf = (context: { error?: unknown; call?: unknown; batch?: unknown }) => JSON.stringify({ ...context, error: undefined, call: undefined, batch: undefined });

describe('integration-sdk:attempt', () => {
  it('one context per attempt: method, route template, server address; a retry shows attempt 2', async () => {
    const service = fakeService(envelope(500, 'INTERNAL'), json(200, ORDER));
    const outcome = settle(makeClient(service.fetch, { random: () => 0 }).orders.get('ord-77-private'));
    await vi.runAllTimersAsync();
    expect((await outcome).value).toEqual(ORDER);
    expect(seen.attempts.map(({ method, route, serverAddress, attempt, status }) => ({ method, route, serverAddress, attempt, status }))).toEqual([
      { method: 'GET', route: '/orders/{id}', serverAddress: 'platform.example.com', attempt: 1, status: 500 },
      { method: 'GET', route: '/orders/{id}', serverAddress: 'platform.example.com', attempt: 2, status: 200 },
    ]);
    expect(seen.attempts[0]!.error).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(seen.attempts.every((context) => typeof context.rateLimitWaitMs === 'number')).toBe(true);
    expect(seen.attempts[0]!.call).toBe(seen.calls[0]);
    for (const context of seen.attempts) expect(fieldsOf(context)).not.toContain('ord-77-private');
  });

  it('a 429 attempt shows status 429', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '1' }), json(200, HEALTH));
    const outcome = settle(makeClient(service.fetch).health());
    await vi.runAllTimersAsync();
    await outcome;
    expect(seen.attempts.map((context) => [context.route, context.attempt, context.status])).toEqual([
      ['/health', 1, 429],
      ['/health', 2, 200],
    ]);
    // The Retry-After pause of the 429 is the retry's wait on the rate limit.
    expect(seen.attempts[0]!.rateLimitWaitMs).toBe(0);
    expect(seen.attempts[1]!.rateLimitWaitMs).toBe(1000);
  });

  it('a backoff after a 5xx is not a rate-limit wait', async () => {
    const service = fakeService(envelope(503, 'POINTS_UNAVAILABLE'), json(200, HEALTH));
    const outcome = settle(makeClient(service.fetch).health());
    await vi.runAllTimersAsync();
    await outcome;
    expect(seen.attempts.map((context) => [context.status, context.rateLimitWaitMs])).toEqual([
      [503, 0],
      [200, 0],
    ]);
  });

  it('no key, id, query value or body in any context', async () => {
    const service = fakeService(json(201, { entry: ENTRY, balance: 50 }), json(200, { customer: { id: 'c', name: 'Maria', phone: PHONE, external_id: null }, points: 1, program_id: 'p' }), json(200, {}));
    const client = makeClient(service.fetch);
    await client.loyalty.credit({ phone: PHONE, points: 50, idempotency_key: 'idem-private' });
    await client.loyalty.balance({ phone: PHONE });
    await client.request({ method: 'GET', path: '/orders/ord-88-private', query: { q: 'query-private' } });
    expect(seen.attempts.map((context) => context.route)).toEqual(['/loyalty/points', '/loyalty/balance', '/{path}']);
    const text = [...seen.calls, ...seen.attempts].map(fieldsOf).join('\n');
    for (const secret of [API_KEY, SECRET_PART, PHONE, '91234', 'idem-private', 'ord-88-private', 'query-private', 'Maria']) expect(text).not.toContain(secret);
  });
});

describe('integration-sdk:call', () => {
  it('one context per public call, named as users call it', async () => {
    const service = fakeService(json(200, HEALTH), json(200, { data: [] }), envelope(404, 'NOT_FOUND'));
    const client = makeClient(service.fetch, { maxRetries: 0 });
    await client.health();
    await client.webhooks.list();
    await client.orders.get('x').catch(() => {});
    expect(seen.calls.map((context) => context.operation)).toEqual(['health', 'webhooks.list', 'orders.get']);
    expect(seen.calls[2]!.error).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('catalog.upsertBatches is one call too, from the first batch asked for to the last, with its batches and counts', async () => {
    const answer = (from: number) => ({
      sync_id: `sync-${from}`,
      summary: { created: 2, updated: 0, errors: 0 },
      results: [0, 1].map((index) => ({ index, external_id: `SKU-${from + index}`, status: 'created' })),
    });
    const service = fakeService(json(200, answer(0)), json(200, answer(2)));
    const client = makeClient(service.fetch);
    const items = [0, 1, 2, 3].map((i) => ({ external_id: `SKU-${i}`, name: `Product ${i}`, price: 1 }));
    const yielded = [];
    for await (const batch of client.catalog.upsertBatches(items, { batchSize: 2 })) yielded.push(batch);
    expect(yielded).toHaveLength(2);
    expect(seen.calls.map(({ operation, batches, result, error }) => ({ operation, batches, result, error }))).toEqual([
      { operation: 'catalog.upsertBatches', batches: 2, result: { created: 4, updated: 0, errors: 0 }, error: undefined },
    ]);
    expect(seen.attempts.map((context) => [context.route, context.call])).toEqual([
      ['/products/bulk', seen.calls[0]],
      ['/products/bulk', seen.calls[0]],
    ]);
  });

  it('every public method is one call named as in the surface document', async () => {
    const client = makeClient(fakeService(envelope(404, 'NOT_FOUND')).fetch, { maxRetries: 0 });
    const customer = { phone: PHONE };
    const calls: (() => Promise<unknown>)[] = [
      () => client.health(),
      () => client.request({ method: 'GET', path: '/loyalty/program' }),
      () => client.catalog.upsertProducts([{ external_id: 'SKU-1', name: 'P', price: 1 }]),
      async () => { for await (const _ of client.catalog.upsertBatches([{ external_id: 'SKU-1', name: 'P', price: 1 }])) void _; },
      () => client.stock.set([{ external_id: 'SKU-1', store_id: '5a702cfa-93ea-4c4e-98f3-3418f3d4e711', stock_quantity: 1 }]),
      () => client.orders.get('ord-1'),
      () => client.orders.findByExternalId('MKT-1'),
      () => client.webhooks.create({ url: 'https://erp.example.com/hooks', events: ['order.created'] }),
      () => client.webhooks.list(),
      () => client.webhooks.delete('wh-1'),
      () => client.webhooks.deliveries('wh-1'),
      () => client.webhooks.test('wh-1'),
      () => client.loyalty.program(),
      () => client.loyalty.balance(customer),
      () => client.loyalty.statement(customer),
      () => client.loyalty.credit({ ...customer, points: 1 }),
      () => client.loyalty.debit({ ...customer, points: 1 }),
      () => client.loyalty.validateCoupon({ code: 'C1', ...customer }),
      () => client.loyalty.redeemCoupon({ code: 'C1', store_id: '5a702cfa-93ea-4c4e-98f3-3418f3d4e711', ...customer }),
    ];
    for (const call of calls) await call().catch(() => undefined);
    expect(seen.calls.map((context) => context.operation)).toEqual([
      'health', 'request', 'catalog.upsertProducts', 'catalog.upsertBatches', 'stock.set', 'orders.get', 'orders.findByExternalId',
      'webhooks.create', 'webhooks.list', 'webhooks.delete', 'webhooks.deliveries', 'webhooks.test',
      'loyalty.program', 'loyalty.balance', 'loyalty.statement', 'loyalty.credit', 'loyalty.debit', 'loyalty.validateCoupon', 'loyalty.redeemCoupon',
    ]);
    expect(seen.attempts.map((context) => context.route)).toEqual([
      '/health', '/{path}', '/products/bulk', '/products/bulk', '/stock', '/orders/{id}', '/orders',
      '/webhooks', '/webhooks', '/webhooks/{id}', '/webhooks/{id}/deliveries', '/webhooks/{id}/test',
      '/loyalty/program', '/loyalty/balance', '/loyalty/statement', '/loyalty/points', '/loyalty/points/debit', '/loyalty/coupons/validate', '/loyalty/coupons/redeem',
    ]);
    for (const context of seen.attempts) expect(context.call?.operation).toBeDefined();
  });

  it('catalog.upsertBatches left early ends its call, without an error', async () => {
    const answer = { sync_id: 's', summary: { created: 1, updated: 0, errors: 0 }, results: [{ index: 0, external_id: 'SKU-0', status: 'created' }] };
    const client = makeClient(fakeService(json(200, answer)).fetch);
    const items = [0, 1, 2].map((i) => ({ external_id: `SKU-${i}`, name: `Product ${i}`, price: 1 }));
    for await (const batch of client.catalog.upsertBatches(items, { batchSize: 1 })) {
      expect(batch.summary.created).toBe(1);
      break;
    }
    expect(seen.calls.map(({ operation, error }) => [operation, error])).toEqual([['catalog.upsertBatches', undefined]]);
    expect(seen.calls[0]!.result).toEqual({ created: 1, updated: 0, errors: 0 });
  });
});

describe('a runtime without diagnostics_channel', () => {
  it('publishes nothing and the client still works', async () => {
    const runtime = globalThis.process as { getBuiltinModule?: unknown };
    const getBuiltinModule = runtime.getBuiltinModule;
    runtime.getBuiltinModule = undefined;
    try {
      vi.resetModules();
      const { IntegrationClient } = await import('../src/index.ts');
      const client = new IntegrationClient({ apiKey: API_KEY, baseUrl: 'https://platform.example.com', fetch: fakeService(json(200, HEALTH)).fetch, rateLimit: false });
      await expect(client.health()).resolves.toEqual(HEALTH);
    } finally {
      runtime.getBuiltinModule = getBuiltinModule;
      vi.resetModules();
    }
    expect([seen.calls, seen.attempts]).toEqual([[], []]);
  });
});
