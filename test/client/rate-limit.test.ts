import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RateLimiter } from '../../src/index.ts';
import { TokenBucket } from '../../src/transport/rate-limiter.ts';
import { systemClock } from '../../src/transport/clock.ts';
import { HEALTH, envelope, fakeService, json, makeClient, settle, type Reply } from './helpers.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Acquires `count` tokens at once and records when each was granted. */
function acquireMany(bucket: RateLimiter, count: number): number[] {
  const grantedAt: number[] = [];
  for (let i = 0; i < count; i++) void bucket.acquire().then(() => grantedAt.push(Date.now()));
  return grantedAt;
}

describe('the default token bucket', () => {
  it('lets a burst of 120 through at once, then paces at 2 per second (1% under)', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 120, burst: 120 }, systemClock);
    const grantedAt = acquireMany(bucket, 240);
    await vi.advanceTimersByTimeAsync(0);
    expect(grantedAt).toHaveLength(120);
    expect(new Set(grantedAt)).toEqual(new Set([0]));
    await vi.advanceTimersByTimeAsync(60_000);
    // 2 per second nominal; refilled 1% slower: 118 in the next minute, ≥ 97% of the allowed 120.
    expect(grantedAt.length - 120).toBe(118);
    const paced = grantedAt.slice(120, 130);
    expect(paced.every((t, i) => i === 0 || t - paced[i - 1]! >= 500)).toBe(true);
    expect(paced[0]).toBe(506); // 1 / (2 × 0.99) s, rounded up to the ms
  });

  it('serves waiters first come, first served', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 60, burst: 1 }, systemClock);
    const order: string[] = [];
    await bucket.acquire();
    const waiting = ['a', 'b', 'c'].map((name) => bucket.acquire().then(() => order.push(name)));
    await vi.advanceTimersByTimeAsync(3100);
    await Promise.all(waiting);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('pause holds every waiter and restarts from an empty bucket', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 120, burst: 120 }, systemClock);
    bucket.pause(3000);
    const grantedAt = acquireMany(bucket, 8);
    await vi.advanceTimersByTimeAsync(2999);
    expect(grantedAt).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    // Refilled during the pause like the service's bucket: 3 s × 1.98/s ≈ 5 tokens, not a burst of 120.
    expect(grantedAt).toHaveLength(5);
  });

  it('an aborted waiter leaves the queue and rejects with the reason', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 60, burst: 1 }, systemClock);
    await bucket.acquire();
    const controller = new AbortController();
    const first = settle(bucket.acquire(controller.signal));
    const second = settle(bucket.acquire());
    controller.abort(new Error('gone'));
    expect((await first).error).toEqual(new Error('gone'));
    await vi.advanceTimersByTimeAsync(1011);
    expect(await second).toEqual({ value: undefined });
  });
});

describe('a 429 pauses every call of the client', () => {
  /** The first request meets 429 with Retry-After 2; every later one succeeds. */
  function rateLimitedOnce(): Reply[] {
    return [envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '2' }), json(200, HEALTH)];
  }

  it.each([
    ['the default bucket', undefined],
    ['rateLimit: false', false as const],
  ])('with %s, calls started during the pause wait for its end', async (_name, rateLimit) => {
    const service = fakeService(...rateLimitedOnce());
    const client = makeClient(service.fetch, rateLimit === undefined ? { random: () => 0 } : { rateLimit, random: () => 0 });
    const first = settle(client.health());
    await vi.advanceTimersByTimeAsync(100);
    const others = [settle(client.health()), settle(client.orders.findByExternalId('x'))];
    await vi.advanceTimersByTimeAsync(5000);
    await Promise.all([first, ...others]);
    expect(service.requests[0]!.at).toBe(0);
    // Nobody went out before the Retry-After of the first call ran out.
    expect(service.requests.slice(1).every((r) => r.at >= 2000)).toBe(true);
    expect(service.requests).toHaveLength(4);
  });

  it('a custom RateLimiter is asked before every attempt and told about the 429', async () => {
    const calls: string[] = [];
    const limiter: RateLimiter = {
      acquire: async () => void calls.push('acquire'),
      pause: (ms) => void calls.push(`pause ${ms}`),
    };
    const service = fakeService(...rateLimitedOnce());
    const outcome = settle(makeClient(service.fetch, { rateLimit: limiter }).health());
    await vi.advanceTimersByTimeAsync(2000);
    expect((await outcome).value).toEqual(HEALTH);
    expect(calls).toEqual(['acquire', 'pause 2000', 'acquire']);
  });
});

describe('against a service enforcing the same bucket', () => {
  it('a long run draws no 429 after its first second and uses ≥ 97% of the allowed rate', async () => {
    // The service's bucket: capacity 120, exactly 2 tokens per second, checked when a request
    // arrives, after 0–40 ms of network delay that varies per request.
    let tokens = 120;
    let refilledAt = 0;
    let seed = 7;
    const jitter = () => ((seed = (seed * 16807) % 2147483647) % 40);
    const rejected: number[] = [];
    const service = fakeService(async () => {
      await new Promise((resolve) => setTimeout(resolve, jitter()));
      const now = Date.now();
      tokens = Math.min(120, tokens + ((now - refilledAt) / 1000) * 2);
      refilledAt = now;
      if (tokens < 1) {
        rejected.push(now);
        return envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': String(Math.max(1, Math.ceil((1 - tokens) / 2))) })({} as never);
      }
      tokens -= 1;
      return json(200, HEALTH)({} as never);
    });
    const client = makeClient(service.fetch, { rateLimit: { requestsPerMinute: 120, burst: 120 } });

    const total = 420;
    let started = 0;
    let done = 0;
    const worker = async () => {
      while (started < total) {
        started++;
        await client.health();
        done++;
      }
    };
    const workers = Promise.all(Array.from({ length: 8 }, worker));
    await vi.advanceTimersByTimeAsync(160_000);
    await workers;

    expect(done).toBe(total);
    expect(rejected.filter((at) => at > 1000)).toEqual([]);
    const lastAt = Math.max(...service.requests.map((r) => r.at));
    const allowed = 120 + (lastAt / 1000) * 2;
    expect(service.requests.length / allowed).toBeGreaterThanOrEqual(0.97);
  });
});
