import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConflictError,
  ConnectionError,
  FeatureDisabledError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
  type IntegrationClient,
} from '../../src/index.ts';
import { parseRetryAfter } from '../../src/transport/retry-after.ts';
import { ENTRY, HEALTH, PHONE, empty, envelope, fakeService, fails, gaps, json, makeClient, networkError, settle, type Reply } from '../support/fake-service.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-21T12:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

async function run<T>(promise: Promise<T>) {
  const outcome = settle(promise);
  await vi.runAllTimersAsync();
  return outcome;
}

const healthy = json(200, HEALTH);
const created = json(201, { id: 'w1', url: 'https://erp.example.com/h', events: ['order.created'], secret: 'whsec_x', warning: 'once', created_at: '2026-11-21T12:00:00.000Z' });

describe('safe calls (GET health)', () => {
  const retried: [string, Reply][] = [
    ['a connection reset', fails(networkError('ECONNRESET', 'read ECONNRESET'))],
    ['a refused connection', fails(networkError('ECONNREFUSED'))],
    ['500 INTERNAL', envelope(500, 'INTERNAL')],
    ['502 from a gateway', () => new Response('bad gateway', { status: 502 })],
    ['504 from a gateway', () => new Response('gateway timeout', { status: 504 })],
    ['503 AUTH_UNAVAILABLE', envelope(503, 'AUTH_UNAVAILABLE')],
    ['503 POINTS_UNAVAILABLE', envelope(503, 'POINTS_UNAVAILABLE')],
    ['503 without an envelope', empty(503)],
    ['429 RATE_LIMITED', envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '1' })],
  ];
  it.each(retried)('retry after %s', async (_name, failure) => {
    const service = fakeService(failure, healthy);
    const { value } = await run(makeClient(service.fetch).health());
    expect(value).toEqual(HEALTH);
    expect(service.requests).toHaveLength(2);
  });

  const final: [string, Reply][] = [
    ['400 VALIDATION_ERROR', envelope(400, 'VALIDATION_ERROR')],
    ['401 INVALID_API_KEY', envelope(401, 'INVALID_API_KEY')],
    ['403 INSUFFICIENT_SCOPE', envelope(403, 'INSUFFICIENT_SCOPE')],
    ['404 NOT_FOUND', envelope(404, 'NOT_FOUND')],
    ['409 CONFLICT (no idempotency key)', envelope(409, 'CONFLICT')],
    ['409 WEBHOOK_LIMIT_REACHED', envelope(409, 'WEBHOOK_LIMIT_REACHED')],
    ['422 INSUFFICIENT_BALANCE', envelope(422, 'INSUFFICIENT_BALANCE')],
    ['503 FEATURE_DISABLED', envelope(503, 'FEATURE_DISABLED')],
    ['501 from a proxy', () => new Response('not implemented', { status: 501 })],
  ];
  it.each(final)('no retry after %s', async (_name, failure) => {
    const service = fakeService(failure, healthy);
    const { error } = await run(makeClient(service.fetch).health());
    expect(error).toBeDefined();
    expect(service.requests).toHaveLength(1);
  });

  it('FEATURE_DISABLED is thrown as is', async () => {
    const { error } = await run(makeClient(fakeService(envelope(503, 'FEATURE_DISABLED')).fetch).health());
    expect(error).toBeInstanceOf(FeatureDisabledError);
  });

  it('maxRetries (3 by default) bounds the attempts, then the last error is thrown', async () => {
    const service = fakeService(envelope(500, 'INTERNAL'));
    const { error } = await run(makeClient(service.fetch).health());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(service.requests).toHaveLength(4);
  });

  it('maxRetries can be set per client and per call', async () => {
    const perClient = fakeService(envelope(500, 'INTERNAL'));
    await run(makeClient(perClient.fetch, { maxRetries: 1 }).health());
    expect(perClient.requests).toHaveLength(2);
    const perCall = fakeService(envelope(500, 'INTERNAL'));
    await run(makeClient(perCall.fetch, { maxRetries: 5 }).health({ maxRetries: 0 }));
    expect(perCall.requests).toHaveLength(1);
  });
});

describe('backoff: full jitter, 0.5 s doubling to at most 8 s', () => {
  it('waits random() × min(8 s, 0.5 s × 2^retry)', async () => {
    const service = fakeService(envelope(500, 'INTERNAL'));
    await run(makeClient(service.fetch, { maxRetries: 6, totalTimeoutMs: 600_000, random: () => 1 }).health());
    expect(gaps(service.requests)).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it('scales with the injected random (full jitter: the lower bound is 0)', async () => {
    const draws = [0, 0.5, 0.25];
    const service = fakeService(envelope(503, 'AUTH_UNAVAILABLE'));
    await run(makeClient(service.fetch, { random: () => draws.shift() ?? 0 }).health());
    expect(gaps(service.requests)).toEqual([0, 500, 500]);
  });
});

describe('429 and Retry-After', () => {
  it('waits Retry-After seconds, not the backoff', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '3' }), healthy);
    await run(makeClient(service.fetch, { random: () => 0 }).health());
    expect(gaps(service.requests)).toEqual([3000]);
  });

  it('accepts an HTTP-date Retry-After', async () => {
    const at = new Date(Date.now() + 5000).toUTCString();
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': at }), healthy);
    await run(makeClient(service.fetch).health());
    expect(gaps(service.requests)).toEqual([5000]);
  });

  it('a Retry-After beyond maxRetryAfterMs throws RateLimitError at once', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '120' }), healthy);
    const { error } = await run(makeClient(service.fetch).health());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
    expect(service.requests).toHaveLength(1);
  });

  it.each(['-1', '+3', '1,2', '1.5e3', 'soon', '1.5', '99999999999999999999999', '3000000000'])('Retry-After %j is neither delta-seconds nor an HTTP-date: the default pause (1 s)', async (value) => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': value }), healthy);
    await run(makeClient(service.fetch, { random: () => 0 }).health());
    expect(gaps(service.requests)).toEqual([1000]);
  });

  it.each([' 3', '3 ', '\t3', '1.5', '-1', '+3', '1,2', '０', '3e0', '0x10', '99999999999999999999999', 'Sun, 06 Nov 1994 08:49:37 GMT '])('parseRetryAfter(%j) is not the grammar: undefined, so the default pause', (value) => {
    expect(parseRetryAfter(value, Date.now())).toBeUndefined();
  });

  it('parseRetryAfter reads digits and the three HTTP-date forms', () => {
    const now = Date.parse('1994-11-06T08:49:30Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(7000);
  });

  it('the cap is an option', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '3' }), healthy);
    const { error } = await run(makeClient(service.fetch, { maxRetryAfterMs: 2000 }).health());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(service.requests).toHaveLength(1);
  });
});

describe('unsafe calls (webhooks.create, webhooks.test) never act twice', () => {
  const create = (client: IntegrationClient) => client.webhooks.create({ url: 'https://erp.example.com/h', events: ['order.created'] });

  const notRepeated: [string, Reply][] = [
    ['500', envelope(500, 'INTERNAL')],
    ['502', () => new Response('bad gateway', { status: 502 })],
    ['504', () => new Response('gateway timeout', { status: 504 })],
    ['a connection reset', fails(networkError('ECONNRESET', 'read ECONNRESET'))],
    ['a dropped body ("terminated")', fails(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }))],
    ['409 WEBHOOK_LIMIT_REACHED', envelope(409, 'WEBHOOK_LIMIT_REACHED')],
    ['503 FEATURE_DISABLED', envelope(503, 'FEATURE_DISABLED')],
  ];
  const noEndpoints = json(200, { data: [] });
  const posts = (service: ReturnType<typeof fakeService>) => service.requests.filter((request) => request.method === 'POST');

  it.each(notRepeated)('create is not repeated after %s', async (_name, failure) => {
    const service = fakeService(noEndpoints, failure, noEndpoints);
    const { error } = await run(create(makeClient(service.fetch)));
    expect(error).toBeDefined();
    expect(posts(service)).toHaveLength(1);
  });

  const repeatedOnce: [string, Reply][] = [
    ['a refused connection', fails(networkError('ECONNREFUSED'))],
    ['an unresolvable host', fails(networkError('ENOTFOUND', 'getaddrinfo ENOTFOUND platform.example.com'))],
    ['429', envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '1' })],
    ['503', envelope(503, 'AUTH_UNAVAILABLE')],
  ];
  it.each(repeatedOnce)('create is repeated after %s', async (_name, failure) => {
    const service = fakeService(noEndpoints, failure, created);
    const { value } = await run(create(makeClient(service.fetch)));
    expect(value).toMatchObject({ id: 'w1', secret: 'whsec_x' });
    expect(posts(service)).toHaveLength(2);
  });

  it('test is not repeated after 500, and is after 503', async () => {
    const after500 = fakeService(envelope(500, 'INTERNAL'), json(202, { delivery_id: 'd' }));
    expect((await run(makeClient(after500.fetch).webhooks.test('w1'))).error).toBeInstanceOf(InternalServerError);
    expect(after500.requests).toHaveLength(1);
    const after503 = fakeService(envelope(503, 'AUTH_UNAVAILABLE'), json(202, { delivery_id: 'd' }));
    expect((await run(makeClient(after503.fetch).webhooks.test('w1'))).value).toEqual({ delivery_id: 'd' });
    expect(after503.requests).toHaveLength(2);
  });

  it('client.request: POST is unsafe by default, idempotent: true makes it safe, GET is safe', async () => {
    const post = fakeService(envelope(500, 'INTERNAL'), json(200, {}));
    await run(makeClient(post.fetch).request({ method: 'POST', path: '/x' }));
    expect(post.requests).toHaveLength(1);
    const idempotentPost = fakeService(envelope(500, 'INTERNAL'), json(200, {}));
    await run(makeClient(idempotentPost.fetch).request({ method: 'POST', path: '/x', idempotent: true }));
    expect(idempotentPost.requests).toHaveLength(2);
    const get = fakeService(envelope(500, 'INTERNAL'), json(200, {}));
    await run(makeClient(get.fetch).request({ method: 'GET', path: '/x' }));
    expect(get.requests).toHaveLength(2);
  });
});

describe('loyalty writes carry one idempotency_key across retries', () => {
  it('credit: 409 CONFLICT and 500 retried with the same generated key, returned in the result', async () => {
    let made = 0;
    const service = fakeService(envelope(409, 'CONFLICT'), envelope(500, 'INTERNAL'), json(201, { entry: ENTRY, balance: 50 }));
    const client = makeClient(service.fetch, { randomUUID: () => `key-${++made}` });
    const { value } = await run(client.loyalty.credit({ phone: PHONE, points: 50 }));
    expect(service.requests).toHaveLength(3);
    expect(service.requests.map((r) => (r.body as { idempotency_key: string }).idempotency_key)).toEqual(['key-1', 'key-1', 'key-1']);
    expect(value?.idempotency_key).toBe('key-1');
    expect(made).toBe(1);
  });

  it('debit and redeemCoupon retry CONFLICT too; a second call gets a new key', async () => {
    let made = 0;
    const service = fakeService(envelope(409, 'CONFLICT'), json(201, { entry: ENTRY, balance: 1 }));
    const client = makeClient(service.fetch, { randomUUID: () => `key-${++made}` });
    await run(client.loyalty.debit({ phone: PHONE, points: 1 }));
    await run(client.loyalty.debit({ phone: PHONE, points: 1 }));
    expect(service.requests.map((r) => (r.body as { idempotency_key: string }).idempotency_key)).toEqual(['key-1', 'key-1', 'key-2']);
    const redeem = fakeService(envelope(409, 'CONFLICT'), json(200, { redemption: { id: 'r', code: 'C', discount: 1, created_at: 'x' } }));
    await run(makeClient(redeem.fetch).loyalty.redeemCoupon({ code: 'C', phone: PHONE, store_id: 's', idempotency_key: 'mine' }));
    expect(redeem.requests.map((r) => (r.body as { idempotency_key: string }).idempotency_key)).toEqual(['mine', 'mine']);
  });

  it('CONFLICT is not retried where no key protects the request', async () => {
    const service = fakeService(envelope(409, 'CONFLICT'), json(200, {}));
    const { error } = await run(makeClient(service.fetch).loyalty.validateCoupon({ code: 'C' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(service.requests).toHaveLength(1);
  });
});

describe('webhooks.delete', () => {
  it('a retried delete meeting 404 counts as deleted', async () => {
    const service = fakeService(envelope(500, 'INTERNAL'), envelope(404, 'NOT_FOUND'));
    const { value, error } = await run(makeClient(service.fetch).webhooks.delete('w1'));
    expect(error).toBeUndefined();
    expect(value).toBeUndefined();
    expect(service.requests).toHaveLength(2);
  });

  it('a retried delete after a connection reset meeting 404 resolves', async () => {
    const service = fakeService(fails(networkError('ECONNRESET')), envelope(404, 'NOT_FOUND'));
    expect((await run(makeClient(service.fetch).webhooks.delete('w1'))).error).toBeUndefined();
  });

  it('a first-attempt 404 throws NotFoundError', async () => {
    const service = fakeService(envelope(404, 'NOT_FOUND'));
    const { error } = await run(makeClient(service.fetch).webhooks.delete('w1'));
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('a connection failure on every attempt ends as ConnectionError', async () => {
    const service = fakeService(fails(networkError('ECONNRESET')));
    const { error } = await run(makeClient(service.fetch).webhooks.delete('w1'));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(service.requests).toHaveLength(4);
  });
});
