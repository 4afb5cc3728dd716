// What an adversarial review broke in the transport (issue 14, items 2-7 and 9), one test each.
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, AuthenticationError, ConnectionError, InvalidInputError, RateLimitError, ResponseValidationError } from '../../src/index.ts';
import { MAX_RESPONSE_BYTES } from '../../src/transport/http-requester.ts';
import { parseRetryAfter } from '../../src/transport/retry-after.ts';
import { API_KEY, ENTRY, HEALTH, PHONE, SECRET_PART, envelope, fakeService, fails, json, makeClient, networkError } from '../client/helpers.ts';

afterEach(() => vi.useRealTimers());

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('loyalty writes: every error carries the idempotency_key used, so the repeat is safe', () => {
  it.each([
    ['credit', (c: ReturnType<typeof makeClient>) => c.loyalty.credit({ phone: PHONE, points: 5 })],
    ['debit', (c: ReturnType<typeof makeClient>) => c.loyalty.debit({ phone: PHONE, points: 5 })],
    ['redeemCoupon', (c: ReturnType<typeof makeClient>) => c.loyalty.redeemCoupon({ code: 'WELCOME10', phone: PHONE, store_id: '5a702cfa-93ea-4c4e-98f3-3418f3d4e711' })],
  ])('%s: a dropped connection after processing, then the repeat with the same key', async (_name, call) => {
    const service = fakeService(fails(networkError('ECONNRESET', 'read ECONNRESET')));
    const client = makeClient(service.fetch, { maxRetries: 0, randomUUID: () => 'made-key-1' });
    const error = (await rejection(call(client))) as ConnectionError & { idempotency_key?: string };
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.idempotency_key).toBe('made-key-1');
    expect((service.requests[0]!.body as { idempotency_key: string }).idempotency_key).toBe('made-key-1');
  });

  it('an answered error carries it too, the key the caller gave', async () => {
    const service = fakeService(envelope(422, 'INSUFFICIENT_BALANCE'));
    const error = (await rejection(makeClient(service.fetch).loyalty.debit({ phone: PHONE, points: 5, idempotency_key: 'order-1' }))) as ApiError & { idempotency_key?: string };
    expect(error.idempotency_key).toBe('order-1');
    expect(JSON.parse(JSON.stringify(error)).idempotency_key).toBe('order-1');
  });
});

describe('path segments never leave their route', () => {
  // An id is one encoded segment: `%2e%2e` as an id is sent as `%252e%252e`, a name, not a step up.
  const ids = ['..', '.', ''];
  it.each(ids)('orders.get(%j) is InvalidInputError, nothing sent', async (id) => {
    const service = fakeService(json(200, {}));
    const client = makeClient(service.fetch);
    await expect(client.orders.get(id)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client.webhooks.test(id)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client.webhooks.delete(id)).rejects.toBeInstanceOf(InvalidInputError);
    expect(service.requests).toHaveLength(0);
  });

  it.each(['/../../admin', '/%2e%2e/%2e%2e/admin', '/%2E./admin', '/.%2e/admin', '/orders/%2e', '/orders/..', '/orders//x', '/..\\..\\admin', '../admin'])('request({ path: %j }) is InvalidInputError, the key sent nowhere', async (path) => {
    const service = fakeService(json(200, {}));
    await expect(makeClient(service.fetch).request({ method: 'GET', path })).rejects.toBeInstanceOf(InvalidInputError);
    expect(service.requests).toHaveLength(0);
  });

  it('an id with a slash or a query character stays one encoded segment', async () => {
    const service = fakeService(json(404, { error: { code: 'NOT_FOUND', message: 'no' } }));
    await client404(service);
    expect(service.requests[0]!.url.pathname).toBe('/integration/v1/orders/a%2F..%2Fb%3Fx');
  });
  async function client404(service: ReturnType<typeof fakeService>) {
    await makeClient(service.fetch).orders.get('a/../b?x').catch(() => {});
  }
});

describe('request() query values', () => {
  it.each([{ a: 1 }, [1, 2], () => 1, Symbol('s'), Number.NaN])('%s is InvalidInputError, not String(value)', async (value) => {
    const service = fakeService(json(200, {}));
    const error = await rejection(makeClient(service.fetch).request({ method: 'GET', path: '/orders', query: { external_order_id: value as never } }));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(service.requests).toHaveLength(0);
  });
});

describe('a call whose deadline ends before the client pause does', () => {
  it('throws RateLimitError at once with the remaining pause, sending nothing', async () => {
    vi.useFakeTimers({ now: 0 });
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '30' }), json(200, HEALTH));
    const client = makeClient(service.fetch, { maxRetries: 0 });
    await expect(client.health()).rejects.toBeInstanceOf(RateLimitError);
    await vi.advanceTimersByTimeAsync(1_000);
    let settled = false;
    const error = rejection(client.health({ totalTimeoutMs: 2_000 })).finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
    const thrown = (await error) as RateLimitError;
    expect(thrown).toBeInstanceOf(RateLimitError);
    expect(thrown.retryAfterMs).toBe(29_000);
    expect(service.requests).toHaveLength(1);
  });

  it('a call with time enough still waits the pause out and goes', async () => {
    vi.useFakeTimers({ now: 0 });
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '3' }), json(200, HEALTH));
    const client = makeClient(service.fetch, { maxRetries: 0 });
    await expect(client.health()).rejects.toBeInstanceOf(RateLimitError);
    const next = client.health({ totalTimeoutMs: 10_000 });
    await vi.advanceTimersByTimeAsync(3_000);
    await expect(next).resolves.toEqual(HEALTH);
  });
});

describe('a key echoed by the server is scrubbed from every string an error carries', () => {
  it('message, details, www-authenticate and Location headers, inspect and JSON', async () => {
    const service = fakeService(
      json(401, { error: { code: 'INVALID_API_KEY', message: `key ${API_KEY} is revoked`, details: { got: API_KEY, nested: [`x${SECRET_PART}y`] } } }, { 'www-authenticate': `ApiKey ${API_KEY}`, location: `https://x.example/?k=${encodeURIComponent(API_KEY)}` }),
    );
    const error = (await rejection(makeClient(service.fetch).health())) as AuthenticationError;
    expect(error).toBeInstanceOf(AuthenticationError);
    const everything = [error.message, JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error.headers), JSON.stringify(error.details)].join('\n');
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(SECRET_PART);
    expect(everything).toContain('[redacted]');
  });

  it('a 302 whose Location carries the key', async () => {
    const service = fakeService(() => new Response(null, { status: 302, headers: { location: `https://evil.example/${API_KEY}` } }));
    const error = (await rejection(makeClient(service.fetch).health())) as ApiError;
    expect(inspect(error, { depth: 10 }) + JSON.stringify(error)).not.toContain(SECRET_PART);
  });
});

describe('response bodies are capped', () => {
  it('an answer larger than the cap fails with a clear error, read no further', async () => {
    let pulled = 0;
    const chunk = new Uint8Array(1024 * 1024);
    const service = fakeService(
      () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              pulled += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }),
          { status: 200 },
        ),
    );
    const error = (await rejection(makeClient(service.fetch, { maxRetries: 0 }).health())) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message + JSON.stringify(error.issues)).toMatch(/larger than/);
    expect(pulled).toBeLessThanOrEqual(MAX_RESPONSE_BYTES + 4 * chunk.byteLength);
  });

  it('a declared Content-Length past the cap is refused before reading', async () => {
    const service = fakeService(() => new Response('{}', { status: 200, headers: { 'content-length': String(MAX_RESPONSE_BYTES + 1) } }));
    await expect(makeClient(service.fetch, { maxRetries: 0 }).health()).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('a bulk-sized answer is read', async () => {
    const results = Array.from({ length: 500 }, (_, index) => ({ index, external_id: `SKU-${index}`, status: 'created', product_id: `p-${index}` }));
    const service = fakeService(json(200, { ...HEALTH, padding: results }));
    await expect(makeClient(service.fetch).health()).resolves.toMatchObject({ status: 'ok' });
  });
});

describe('Retry-After: delta-seconds digits or an HTTP-date, nothing else', () => {
  const now = Date.parse('2026-11-24T10:00:00Z');
  it.each(['-1', '+3', '1,2', '1.5', '1e3', 'soon', '', 'Tue, 24 Nov 2026'])('%j is unreadable (the default pause applies)', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
  it.each([
    ['7', 7_000],
    [' 0 ', 0],
    ['Tue, 24 Nov 2026 10:00:05 GMT', 5_000],
    ['Tuesday, 24-Nov-26 10:00:09 GMT', 9_000],
    ['Tue Nov 24 10:00:03 2026', 3_000],
    ['Tue, 24 Nov 2026 09:00:00 GMT', 0],
  ])('%j → %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it('a 429 with Retry-After -1 pauses for the default second, not zero', async () => {
    vi.useFakeTimers({ now: 0 });
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '-1' }), json(200, HEALTH));
    const pending = makeClient(service.fetch).health();
    await vi.advanceTimersByTimeAsync(999);
    expect(service.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(pending).resolves.toEqual(HEALTH);
  });
});

void ENTRY;
