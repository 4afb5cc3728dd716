import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, IntegrationClient, RateLimitError, TimeoutError, type RateLimiter } from 'integration-sdk';
import { BASE, HEALTH, KEY, KEY_SECRET, ENTRY, bulkOk, fail, ok, refused, sequence, service, type Answer } from './helpers.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('deadlines', () => {
  it('a body that stalls after the headers is a TimeoutError at timeoutMs', async () => {
    const stall: Answer = () =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"status":')) }), { status: 200, headers: { 'content-type': 'application/json' } });
    const { fetch, calls } = service(stall);
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, timeoutMs: 1_000, maxRetries: 0 });
    const promise = client.health().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(999);
    let settled = false;
    void promise.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(2);
    expect(await promise).toBeInstanceOf(TimeoutError);
    expect(calls).toHaveLength(1);
  });

  it('per-call timeoutMs overrides the client', async () => {
    const { fetch } = service(() => new Promise<Response>(() => {}));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, timeoutMs: 60_000, maxRetries: 0 });
    const promise = client.health({ timeoutMs: 100 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(150);
    const error = await promise;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as TimeoutError).cause).toBeInstanceOf(Error);
    expect(JSON.stringify(error)).not.toContain(KEY_SECRET);
  });

  it('totalTimeoutMs bounds all attempts together', async () => {
    const { fetch, calls } = service(() => new Promise<Response>(() => {}));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, timeoutMs: 1_000, totalTimeoutMs: 2_500, maxRetries: 10 });
    const promise = client.health().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await promise).toBeInstanceOf(TimeoutError);
    expect(calls.length).toBeLessThanOrEqual(3);
  });

  it('a ConnectionError keeps a sanitised cause and never the key', async () => {
    const { fetch } = service(refused);
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, maxRetries: 0 });
    const error = await client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).cause).toBeDefined();
    expect(JSON.stringify(error)).not.toContain(KEY_SECRET);
    expect((error as Error).message).not.toContain(KEY_SECRET);
  });
});

describe('rate limiter', () => {
  it('default bucket: a burst of 120 at once, then about 2 per second', async () => {
    const { fetch, calls } = service(ok(HEALTH));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch });
    const all = Promise.all(Array.from({ length: 124 }, () => client.health()));
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(120);
    await vi.advanceTimersByTimeAsync(1_100);
    expect(calls.length).toBeGreaterThanOrEqual(121);
    expect(calls.length).toBeLessThanOrEqual(123);
    await vi.advanceTimersByTimeAsync(5_000);
    await all;
    expect(calls).toHaveLength(124);
  });

  it('rateLimit false: no pacing', async () => {
    const { fetch, calls } = service(ok(HEALTH));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, rateLimit: false });
    const all = Promise.all(Array.from({ length: 300 }, () => client.health()));
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(300);
    await all;
  });

  it('a custom RateLimiter is asked before every attempt and told of a 429', async () => {
    const acquired: (AbortSignal | undefined)[] = [];
    const paused: number[] = [];
    const limiter: RateLimiter = {
      acquire: async (signal) => {
        acquired.push(signal);
      },
      pause: (ms) => {
        paused.push(ms);
      },
    };
    const { fetch, calls } = service(sequence(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '3' }), ok(HEALTH)));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, rateLimit: limiter });
    const promise = client.health();
    await vi.advanceTimersByTimeAsync(3_100);
    await expect(promise).resolves.toEqual(HEALTH);
    expect(calls).toHaveLength(2);
    expect(acquired).toHaveLength(2);
    expect(paused).toEqual([3_000]);
  });

  it('RateLimitError after retries run out keeps retryAfterMs', async () => {
    const { fetch, calls } = service(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '1' }));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, rateLimit: false, maxRetries: 2 });
    const promise = client.health().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    const error = await promise;
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(1_000);
    expect(calls).toHaveLength(3);
  });
});

describe('logger', () => {
  it('never receives the key, query values or bodies', async () => {
    const lines: unknown[] = [];
    const logger = { debug: (...a: unknown[]) => lines.push(a), info: (...a: unknown[]) => lines.push(a), warn: (...a: unknown[]) => lines.push(a), error: (...a: unknown[]) => lines.push(a) };
    const { fetch } = service(sequence(fail(429, 'RATE_LIMITED', undefined, { 'Retry-After': '1' }), ok({ customer: { id: 'c', name: 'Maria', phone: '+5511912345678', external_id: null }, points: 1, program_id: 'p' })));
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, logger });
    const promise = client.loyalty.balance({ phone: '+5511912345678' });
    await vi.advanceTimersByTimeAsync(2_000);
    await promise;
    const { fetch: f2 } = service(ok({ entry: ENTRY, balance: 1 }, 201));
    await new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch: f2, logger }).loyalty.credit({ phone: '+5511912345678', points: 1, idempotency_key: 'idem-secret-123' });
    const text = JSON.stringify(lines);
    expect(lines.length).toBeGreaterThan(0);
    expect(text).not.toContain(KEY_SECRET);
    expect(text).not.toContain('5511912345678');
    expect(text).not.toContain('Maria');
    expect(text).not.toContain('idem-secret-123');
  });
});

describe('bulk deadlines and abort', () => {
  it('per-call options reach every batch request; abort stops the run', async () => {
    const { fetch, calls } = service(async (seen, n) => {
      if (n === 2) return new Promise<Response>(() => {});
      return bulkOk(seen, n);
    });
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch, rateLimit: false });
    const controller = new AbortController();
    const promise = client.catalog
      .upsertProducts(Array.from({ length: 6 }, (_, i) => ({ external_id: `S${i}`, name: 'n', price: 1 })), { batchSize: 2, signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(50);
    expect(calls).toHaveLength(2);
    controller.abort();
    const error = await promise;
    expect((error as Error).name).toBe('AbortError');
  });
});
