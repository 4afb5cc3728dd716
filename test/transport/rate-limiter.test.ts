import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RateLimiter } from '../../src/index.ts';
import { TokenBucket } from '../../src/transport/rate-limiter.ts';
import { systemClock } from '../../src/clock.ts';
import { HEALTH, ORDER, envelope, fakeService, json, makeClient, settle, type Reply } from '../support/fake-service.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * Acquires `count` tokens at once and records when each was granted. Each attempt "finishes" as
 * soon as its token is granted, as an instant answer would, unless `slowFirstMs` delays the first.
 */
function acquireMany(bucket: RateLimiter, count: number, slowFirstMs = 0): number[] {
  const grantedAt: number[] = [];
  for (let i = 0; i < count; i++) {
    void bucket.acquire().then((finished) => {
      grantedAt.push(Date.now());
      if (i === 0 && slowFirstMs > 0) setTimeout(() => finished?.(), slowFirstMs);
      else finished?.();
    });
  }
  return grantedAt;
}

describe('the default token bucket', () => {
  it('lets a burst of 120 through at once, then paces at exactly 2 per second', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 120, burst: 120 }, systemClock);
    const grantedAt = acquireMany(bucket, 240);
    await vi.advanceTimersByTimeAsync(0);
    expect(grantedAt).toHaveLength(120);
    expect(new Set(grantedAt)).toEqual(new Set([0]));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(grantedAt.length - 120).toBe(120);
    expect(grantedAt.slice(120, 125)).toEqual([500, 1000, 1500, 2000, 2500]);
  });

  it('starts refilling a full bucket only when the attempt of the token it lost has finished', async () => {
    // The service starts refilling when that request arrives; its answer comes back after that.
    const bucket = new TokenBucket({ requestsPerMinute: 120, burst: 120 }, systemClock);
    const grantedAt = acquireMany(bucket, 122, 300);
    await vi.advanceTimersByTimeAsync(799);
    expect(grantedAt).toHaveLength(120);
    await vi.advanceTimersByTimeAsync(1);
    expect(grantedAt.slice(120)).toEqual([800]);
    await vi.advanceTimersByTimeAsync(500);
    expect(grantedAt.slice(120)).toEqual([800, 1300]);
  });

  it('a burst of 1 lets one request through at once, then one per refill', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 60, burst: 1 }, systemClock);
    const grantedAt = acquireMany(bucket, 3);
    await vi.advanceTimersByTimeAsync(0);
    expect(grantedAt).toEqual([0]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(grantedAt).toEqual([0, 1000, 2000]);
  });

  it('serves waiters first come, first served', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 60, burst: 1 }, systemClock);
    const order: string[] = [];
    (await bucket.acquire())?.();
    const waiting = ['a', 'b', 'c'].map((name) => bucket.acquire().then((finished) => { order.push(name); finished?.(); }));
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
    // Refilled during the pause like the service's bucket: 3 s × 2/s = 6 tokens, not a burst of 120.
    expect(grantedAt).toHaveLength(6);
  });

  it('an aborted waiter leaves the queue and rejects with the reason', async () => {
    const bucket = new TokenBucket({ requestsPerMinute: 60, burst: 1 }, systemClock);
    (await bucket.acquire())?.();
    const controller = new AbortController();
    const first = settle(bucket.acquire(controller.signal));
    const second = settle(bucket.acquire());
    controller.abort(new Error('gone'));
    expect((await first).error).toEqual(new Error('gone'));
    await vi.advanceTimersByTimeAsync(1000);
    expect((await second).error).toBeUndefined();
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
    let pausing!: () => void;
    const paused = new Promise<void>((resolve) => (pausing = resolve));
    const logger = { warn: (message: string) => /pausing every call/.test(message) && pausing() };
    const client = makeClient(service.fetch, rateLimit === undefined ? { random: () => 0, logger } : { rateLimit, random: () => 0, logger });
    const first = settle(client.health());
    // Once the first call has met its 429 (at fake time 0, however long loading ky takes in real time).
    await paused;
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

describe('what a custom RateLimiter is told about the request', () => {
  it('a custom RateLimiter is told the method and route template of each attempt, never an id', async () => {
    const asked: unknown[] = [];
    const limiter: RateLimiter = {
      acquire: async (_signal, _budget, request) => void asked.push(request),
      pause: () => {},
    };
    const service = fakeService(json(200, HEALTH), json(200, ORDER), json(200, { results: [] }), json(200, { results: [] }));
    const client = makeClient(service.fetch, { rateLimit: limiter });
    await client.health();
    await client.orders.get(ORDER.order_id);
    await settle(client.catalog.upsertProducts([{ external_id: 'SKU-1', name: 'Café', price: 1 }]));
    await settle(client.stock.set([{ external_id: 'SKU-1', store_id: ORDER.store_id, stock_quantity: 1 }]));
    expect(asked).toEqual([
      { method: 'GET', route: '/health' },
      { method: 'GET', route: '/orders/{id}' },
      { method: 'POST', route: '/products/bulk' },
      { method: 'PATCH', route: '/stock' },
    ]);
  });
});

describe('against a service enforcing the same bucket', () => {
  it('a long run draws no 429 at all and uses ≥ 97% of the allowed rate', async () => {
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
    expect(rejected).toEqual([]);
    const lastAt = Math.max(...service.requests.map((r) => r.at));
    const allowed = 120 + (lastAt / 1000) * 2;
    expect(service.requests.length / allowed).toBeGreaterThanOrEqual(0.97);
  });
});

describe('a service whose bucket starts refilling when the first request arrives', () => {
  /**
   * The benchmark's failure (one 429 around the 128th request, in 7 of 7 runs): the service's
   * bucket, full until then, starts refilling when the first request ARRIVES, while the client's
   * starts when it hands out its first token. The first requests are slow (cold connections, the
   * fetch engine loading on the client's first request), later ones fast: the service's refill clock
   * starts late and the later, faster requests come to collect tokens it has not refilled yet.
   */
  it.each([
    ['1,200/min, burst 120 (the benchmark’s setting), first 8 requests 45 ms', 1_200, 120, 8, 45],
    ['1,200/min, burst 120, first 4 requests 150 ms (a loaded host)', 1_200, 120, 4, 150],
    ['120/min, burst 120 (the service’s own), first 8 requests 45 ms', 120, 120, 8, 45],
    ['120/min, burst 120, first 4 requests 400 ms', 120, 120, 4, 400],
    ['600/min, burst 10, first 8 requests 45 ms', 600, 10, 8, 45],
  ])('%s, later 5 ms: no 429 at all over 400 requests, ≥ 97% of the allowed rate', async (_name, requestsPerMinute, burst, slowCount, slowMs) => {
    const perMs = requestsPerMinute / 60_000;
    let tokens = burst;
    let refilledAt = 0;
    let arrived = 0;
    const rejected: number[] = [];
    const accepted: number[] = [];
    const service = fakeService(async () => {
      await new Promise((resolve) => setTimeout(resolve, arrived++ < slowCount ? slowMs : 5));
      const now = Date.now();
      tokens = Math.min(burst, tokens + (now - refilledAt) * perMs);
      refilledAt = now;
      if (tokens < 1) {
        rejected.push(arrived);
        return envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '1' })({} as never);
      }
      tokens -= 1;
      accepted.push(now);
      return json(200, HEALTH)({} as never);
    });
    const client = makeClient(service.fetch, { rateLimit: { requestsPerMinute, burst } });

    const total = 400;
    let started = 0;
    const worker = async () => {
      while (started < total) {
        started++;
        await client.health();
      }
    };
    const workers = Promise.all(Array.from({ length: 4 }, worker));
    await vi.advanceTimersByTimeAsync(((total - burst) / perMs) * 1.1 + 5_000);
    await workers;

    expect(rejected).toEqual([]);
    expect(accepted).toHaveLength(total);
    // The allowance from the first request's arrival (when the service's bucket starts to refill).
    const allowed = burst + (accepted.at(-1)! - accepted[0]!) * perMs;
    expect(accepted.length / allowed).toBeGreaterThanOrEqual(0.97);
  });
});
