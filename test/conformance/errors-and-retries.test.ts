import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as sdk from 'integration-sdk';
import { IntegrationClient } from 'integration-sdk';
import { BASE, CREATED_WEBHOOK, ENTRY, HEALTH, KEY, KEY_SECRET, UUID_V4, fail, ok, refused, reset, sequence, service, type Answer } from './helpers.ts';

function make(answer: Answer, options: Partial<sdk.IntegrationClientOptions> = {}) {
  const s = service(answer);
  return { client: new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch: s.fetch, rateLimit: false, ...options }), calls: s.calls };
}

/** Runs a call to its end under fake timers (backoff waits included). */
async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: any }> {
  const outcome = promise.then((value) => ({ value }), (error: unknown) => ({ error }));
  await vi.runAllTimersAsync();
  return outcome;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

// Codes → classes and their fields are tested once, in test/errors/mapping.test.ts.

describe('retry matrix', () => {
  const attempts = async (answer: Answer, run: (c: IntegrationClient) => Promise<unknown>, options: Partial<sdk.IntegrationClientOptions> = {}) => {
    const { client, calls } = make(answer, options);
    const outcome = await settle(run(client));
    return { ...outcome, count: calls.length, calls };
  };

  it.each([
    ['500', fail(500, 'INTERNAL'), 4],
    ['503 AUTH_UNAVAILABLE', fail(503, 'AUTH_UNAVAILABLE'), 4],
    ['503 POINTS_UNAVAILABLE', fail(503, 'POINTS_UNAVAILABLE'), 4],
    ['429', fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '1' }), 4],
    ['connection refused', refused, 4],
    ['connection reset', reset, 4],
    ['503 FEATURE_DISABLED', fail(503, 'FEATURE_DISABLED'), 1],
    ['400', fail(400, 'VALIDATION_ERROR'), 1],
    ['401', fail(401, 'INVALID_API_KEY'), 1],
    ['403', fail(403, 'INSUFFICIENT_SCOPE'), 1],
    ['404', fail(404, 'NOT_FOUND'), 1],
    ['422', fail(422, 'INSUFFICIENT_BALANCE'), 1],
    ['409 CONFLICT without key', fail(409, 'CONFLICT'), 1],
  ])('a read meeting %s makes %i attempts (maxRetries 3)', async (_n, answer, expected) => {
    const { count, error } = await attempts(answer, (c) => c.health());
    expect(count).toBe(expected);
    expect(error).toBeInstanceOf(sdk.IntegrationError);
  });

  it('maxRetries option (client and per call)', async () => {
    expect((await attempts(fail(500, 'INTERNAL'), (c) => c.health(), { maxRetries: 1 })).count).toBe(2);
    expect((await attempts(fail(500, 'INTERNAL'), (c) => c.health({ maxRetries: 0 }))).count).toBe(1);
    expect((await attempts(fail(500, 'INTERNAL'), (c) => c.health({ maxRetries: 5 }))).count).toBe(6);
  });

  it('a retry that then succeeds resolves', async () => {
    const { value, count } = await attempts(sequence(fail(503, 'AUTH_UNAVAILABLE'), fail(500, 'INTERNAL'), ok(HEALTH)), (c) => c.health());
    expect(value).toEqual(HEALTH);
    expect(count).toBe(3);
  });

  it('webhooks.test: not repeated after 500', async () => {
    expect((await attempts(fail(500, 'INTERNAL'), (c) => c.webhooks.test('w1'))).count).toBe(1);
    expect((await attempts(sequence(fail(503, 'AUTH_UNAVAILABLE'), ok({ delivery_id: 'd' }, 202)), (c) => c.webhooks.test('w1'))).count).toBe(2);
  });

  it('a timed-out attempt is a TimeoutError and is retried for reads', async () => {
    const hang: Answer = () => new Promise<Response>(() => {});
    const { error, count } = await attempts(hang, (c) => c.health(), { timeoutMs: 1000, maxRetries: 2 });
    expect(error).toBeInstanceOf(sdk.TimeoutError);
    expect(count).toBe(3);
  });

  it('webhooks.delete: a retried 404 counts as deleted; a first 404 throws', async () => {
    const { value, error, count } = await attempts(sequence(fail(500, 'INTERNAL'), fail(404, 'NOT_FOUND')), (c) => c.webhooks.delete('w1'));
    expect(error).toBeUndefined();
    expect(value).toBeUndefined();
    expect(count).toBe(2);
    const first = await attempts(fail(404, 'NOT_FOUND'), (c) => c.webhooks.delete('w1'));
    expect(first.error).toBeInstanceOf(sdk.NotFoundError);
  });

  it('CONFLICT is retried for loyalty writes, with the same idempotency_key, returned top-level', async () => {
    const { value, calls } = await attempts(
      sequence(fail(409, 'CONFLICT'), fail(500, 'INTERNAL'), reset, ok({ entry: ENTRY, balance: 1 }, 201)),
      (c) => c.loyalty.credit({ phone: '11912345678', points: 10 }),
    );
    expect(calls).toHaveLength(4);
    const keys = new Set(calls.map((call) => call.body.idempotency_key));
    expect(keys.size).toBe(1);
    const [key] = [...keys];
    expect(key).toMatch(UUID_V4);
    expect((value as any).idempotency_key).toBe(key);
  });

  it('CONFLICT on debit and redeemCoupon too, keeping a given key', async () => {
    const debit = await attempts(sequence(fail(409, 'CONFLICT'), ok({ entry: ENTRY, balance: 1 }, 201)), (c) => c.loyalty.debit({ external_id: 'C', points: 1, idempotency_key: 'abc' }));
    expect(debit.calls.map((call) => call.body.idempotency_key)).toEqual(['abc', 'abc']);
    expect((debit.value as any).idempotency_key).toBe('abc');
    const redeem = await attempts(
      sequence(fail(409, 'CONFLICT'), ok({ redemption: { id: 'r', code: 'X', discount: 1, created_at: 'x' } })),
      (c) => c.loyalty.redeemCoupon({ code: 'X', phone: '1', store_id: 's' }),
    );
    expect(redeem.calls).toHaveLength(2);
    expect(redeem.calls[0]!.body.idempotency_key).toBe(redeem.calls[1]!.body.idempotency_key);
  });

  it('each call gets a fresh idempotency key', async () => {
    const { client, calls } = make(ok({ entry: ENTRY, balance: 1 }, 201));
    await client.loyalty.credit({ phone: '1', points: 1 });
    await client.loyalty.credit({ phone: '1', points: 1 });
    expect(calls[0]!.body.idempotency_key).not.toBe(calls[1]!.body.idempotency_key);
  });
});

describe('429 and Retry-After', () => {
  it('waits Retry-After before retrying', async () => {
    const { client, calls } = make(sequence(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '7' }), ok(HEALTH)));
    const promise = client.health();
    await vi.advanceTimersByTimeAsync(6_900);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toHaveLength(2);
    await expect(promise).resolves.toEqual(HEALTH);
  });

  it('a Retry-After beyond maxRetryAfterMs throws RateLimitError at once', async () => {
    const { client, calls } = make(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '120' }));
    const error = await client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(sdk.RateLimitError);
    expect((error as sdk.RateLimitError).retryAfterMs).toBe(120_000);
    expect(calls).toHaveLength(1);
    const small = make(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '5' }), { maxRetryAfterMs: 1000 });
    await expect(small.client.health()).rejects.toBeInstanceOf(sdk.RateLimitError);
    expect(small.calls).toHaveLength(1);
  });

  it.each([false, undefined])('a 429 pauses every other call of the client (rateLimit %s)', async (rateLimit) => {
    let limited = false;
    const { client, calls } = make(
      (seen) => {
        if (seen.url.pathname.endsWith('/program') && !limited) {
          limited = true;
          return fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '10' })(seen, 0);
        }
        return ok(HEALTH)(seen, 0);
      },
      rateLimit === false ? { rateLimit: false } : {},
    );
    const first = client.request({ method: 'GET', path: '/loyalty/program' });
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(1);
    const other = client.health();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toHaveLength(1); // paused
    await vi.advanceTimersByTimeAsync(5_100);
    await expect(other).resolves.toEqual(HEALTH);
    await expect(first).resolves.toEqual(HEALTH);
    expect(calls).toHaveLength(3);
  });

  it('totalTimeoutMs: no wait is started that would end past it', async () => {
    const { client, calls } = make(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '30' }), { totalTimeoutMs: 10_000 });
    const started = Date.now();
    const { error } = await settle(client.health());
    expect(error).toBeInstanceOf(sdk.RateLimitError);
    expect(calls).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('aborting the signal stops the call during a wait', async () => {
    const { client, calls } = make(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '30' }));
    const controller = new AbortController();
    const promise = client.health({ signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    const error = await promise;
    expect((error as Error).name).toBe('AbortError');
    expect(calls).toHaveLength(1);
  });
});

describe('client.request retry modes', () => {
  it('a POST body with an idempotency_key is retried on CONFLICT and 500 with the same body', async () => {
    const { client, calls } = make(sequence(fail(409, 'CONFLICT'), fail(500, 'INTERNAL'), ok({ entry: ENTRY, balance: 1 }, 201)));
    const body = { phone: '1', points: 1, idempotency_key: 'k-1' };
    const { value } = await settle(client.request({ method: 'POST', path: '/loyalty/points', body }));
    expect(value).toEqual({ entry: ENTRY, balance: 1 });
    expect(calls.map((c) => c.body)).toEqual([body, body, body]);
  });

  it('a POST without a key is not retried after 500; idempotent: true is', async () => {
    const plain = make(fail(500, 'INTERNAL'));
    await settle(plain.client.request({ method: 'POST', path: '/x', body: { a: 1 } }));
    expect(plain.calls).toHaveLength(1);
    const marked = make(fail(500, 'INTERNAL'));
    await settle(marked.client.request({ method: 'POST', path: '/x', body: { a: 1 }, idempotent: true }));
    expect(marked.calls).toHaveLength(4);
    const refusedKey = make(fail(409, 'CONFLICT'));
    await settle(refusedKey.client.request({ method: 'POST', path: '/x', body: { idempotency_key: 'k' }, idempotent: false }));
    expect(refusedKey.calls).toHaveLength(1);
  });

  it('backoff: full jitter from 0.5 s, read from Math.random at call time', async () => {
    const { client, calls } = make(fail(500, 'INTERNAL'));
    const spy = vi.spyOn(Math, 'random').mockReturnValue(0.999);
    try {
      const promise = client.health().catch(() => undefined);
      await vi.advanceTimersByTimeAsync(10);
      expect(calls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(495);
      expect(calls).toHaveLength(2); // ≤ 0.5 s
      await vi.advanceTimersByTimeAsync(900);
      expect(calls).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(200);
      expect(calls).toHaveLength(3); // ≤ 1 s more
      await vi.advanceTimersByTimeAsync(2_000);
      expect(calls).toHaveLength(4); // ≤ 2 s more
      await promise;
    } finally {
      spy.mockRestore();
    }
  });
});
