import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InternalServerError, PauseOutlastsDeadline, RateLimitError, ServiceUnavailableError, TimeoutError, type AcquireBudget, type RateLimiter } from '../../src/index.ts';
import { TokenBucket } from '../../src/transport/rate-limiter.ts';
import { HEALTH, envelope, fakeService, json, makeClient, settle, type Reply } from '../support/fake-service.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Headers at once, then one chunk of the body, then nothing: a stalled download. */
const trickling: Reply = () =>
  new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"status":"o'));
      },
    }),
    { status: 200, headers: { 'content-type': 'application/json' } },
  );

/** Never answers and ignores the abort signal, like a careless custom fetch. */
const silent: Reply = () => new Promise<Response>(() => {});

/** Runs fake time until the call settles; returns the outcome and when it settled. */
async function timed<T>(promise: Promise<T>, budgetMs = 600_000) {
  let settledAt: number | undefined;
  const outcome = settle(promise).then((result) => {
    settledAt = Date.now();
    return result;
  });
  for (let elapsed = 0; settledAt === undefined && elapsed < budgetMs; elapsed += 10) await vi.advanceTimersByTimeAsync(10);
  return { ...(await outcome), settledAt };
}

describe('attempt time-out (timeoutMs) covers reading the body', () => {
  it('a body that trickles and stalls is a TimeoutError at timeoutMs', async () => {
    const service = fakeService(trickling);
    const { error, settledAt } = await timed(makeClient(service.fetch, { timeoutMs: 1000, maxRetries: 0 }).health());
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('timeoutMs');
    expect(settledAt).toBe(1000);
  });

  it('a fetch that never answers (and ignores the signal) is a TimeoutError too', async () => {
    const { error, settledAt } = await timed(makeClient(fakeService(silent).fetch, { timeoutMs: 2000, maxRetries: 0 }).health());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(settledAt).toBe(2000);
  });

  it('a timed-out attempt is retried for a safe call', async () => {
    const service = fakeService(trickling, json(200, HEALTH));
    const { value } = await timed(makeClient(service.fetch, { timeoutMs: 1000 }).health());
    expect(value).toEqual(HEALTH);
    expect(service.requests).toHaveLength(2);
  });

  it('a timed-out webhooks.create is not repeated (it may have been processed)', async () => {
    const service = fakeService(json(200, { data: [] }), silent, json(200, { data: [] }));
    const { error } = await timed(makeClient(service.fetch, { timeoutMs: 1000 }).webhooks.create({ url: 'https://x.example', events: ['order.created'] }));
    expect(error).toBeInstanceOf(TimeoutError);
    // The clean-up looks at once, then once more a timeoutMs later (the service may still register it).
    expect(service.requests.map((request) => [request.method, request.at])).toEqual([['GET', 0], ['POST', 0], ['GET', 1000], ['GET', 2000]]);
  });

  it('per-call timeoutMs overrides the client', async () => {
    const { settledAt } = await timed(makeClient(fakeService(silent).fetch, { maxRetries: 0 }).health({ timeoutMs: 250 }));
    expect(settledAt).toBe(250);
  });
});

describe('totalTimeoutMs bounds attempts and waits together', () => {
  it('no backoff is started that would end past the deadline: the last error is thrown', async () => {
    // random() = 1: attempts at 0, 500, 1500; the next wait (2000 ms) would end at 3500 > 2000.
    const service = fakeService(envelope(500, 'INTERNAL'));
    const { error, settledAt } = await timed(makeClient(service.fetch, { totalTimeoutMs: 2000, maxRetries: 10 }).health());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(service.requests.map((r) => r.at)).toEqual([0, 500, 1500]);
    expect(settledAt).toBe(1500);
  });

  it('a Retry-After wait past the deadline is not started', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '5' }), json(200, HEALTH));
    const { error, settledAt } = await timed(makeClient(service.fetch).health({ totalTimeoutMs: 3000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(settledAt).toBe(0);
    expect(service.requests).toHaveLength(1);
  });

  it('the remaining budget shortens the last attempt', async () => {
    const { error, settledAt } = await timed(makeClient(fakeService(silent).fetch, { timeoutMs: 30_000, totalTimeoutMs: 1200 }).health());
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('totalTimeoutMs');
    expect(settledAt).toBe(1200);
  });

  it('time queued behind the client’s own rate limiter does not count', async () => {
    const service = fakeService(json(200, HEALTH));
    const client = makeClient(service.fetch, { rateLimit: { requestsPerMinute: 60, burst: 1 } });
    await timed(client.health());
    // The bucket is empty: the next call queues ~1 s, more than its whole budget, and still succeeds.
    const { value, error } = await timed(client.health({ totalTimeoutMs: 300, timeoutMs: 300 }));
    expect(error).toBeUndefined();
    expect(value).toEqual(HEALTH);
    expect(service.requests[1]!.at).toBeGreaterThanOrEqual(1000);
  });
});

describe('a 429 pause counts against every call’s deadline, whoever met it', () => {
  // The bucket's pacing is not charged to a call (above); a 429 pause is, as the Retry-After wait of
  // the call that met it is: no call starts waiting out a pause that ends past its totalTimeoutMs.
  const limited = () => fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '5' }));

  it('a second client sharing the limiter: RateLimitError at once, nothing sent', async () => {
    const shared = new TokenBucket({ requestsPerMinute: 120, burst: 120 });
    await timed(makeClient(limited().fetch, { rateLimit: shared }).health({ totalTimeoutMs: 1000 }));
    const service = fakeService(json(200, HEALTH));
    const start = Date.now();
    const { error, settledAt } = await timed(makeClient(service.fetch, { rateLimit: shared }).health({ totalTimeoutMs: 1000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(5000 - start);
    expect(settledAt).toBeLessThanOrEqual(start + 10); // within the first step of `timed`: at once
    expect(service.requests).toHaveLength(0);
  });

  it('a call already queued for a token when the pause begins: refused then, not 5 s later', async () => {
    const service = fakeService(json(200, HEALTH));
    const shared = new TokenBucket({ requestsPerMinute: 60, burst: 1 });
    const client = makeClient(service.fetch, { rateLimit: shared });
    await timed(client.health());
    let settledAt: number | undefined;
    const queued = settle(client.health({ totalTimeoutMs: 1000 })).finally(() => (settledAt = Date.now())); // waits ~1 s for a token: pacing, not charged
    await vi.advanceTimersByTimeAsync(100);
    const pausedAt = Date.now();
    shared.pause(5000); // another client of the limiter met a 429
    await vi.advanceTimersByTimeAsync(0);
    expect((await queued).error).toBeInstanceOf(RateLimitError);
    expect(settledAt).toBe(pausedAt);
    expect(service.requests).toHaveLength(1);
  });

  it('a pause the budget can hold is waited out and charged: the attempt after it has only the rest', async () => {
    const shared = new TokenBucket({ requestsPerMinute: 120, burst: 120 });
    await timed(makeClient(limited().fetch, { rateLimit: shared }).health({ totalTimeoutMs: 1000 }));
    const start = Date.now();
    const { error, settledAt } = await timed(makeClient(fakeService(silent).fetch, { rateLimit: shared, maxRetries: 0 }).health({ totalTimeoutMs: 6000 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('totalTimeoutMs');
    expect(settledAt! - start).toBe(6000); // the rest of the pause, then what is left: not the pause + 6 s
  });

  it('on a retry, a pause past the deadline ends the call with its last error', async () => {
    // The first attempt meets 503; during its backoff, another client's 429 pauses the key for 5 s.
    const shared = new TokenBucket({ requestsPerMinute: 120, burst: 120 });
    const service = fakeService(envelope(503, 'SERVICE_UNAVAILABLE'), json(200, HEALTH));
    const call = timed(makeClient(service.fetch, { rateLimit: shared }).health({ totalTimeoutMs: 3000 }));
    await vi.advanceTimersByTimeAsync(100);
    shared.pause(5000);
    const { error, settledAt } = await call;
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(settledAt).toBeLessThan(1000);
    expect(service.requests).toHaveLength(1);
  });

  it('with rateLimit: false, a call started during the client’s pause is charged for it', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '2' }), silent);
    const client = makeClient(service.fetch, { rateLimit: false, maxRetries: 0 });
    await timed(client.health());
    const start = Date.now();
    const { error, settledAt } = await timed(client.health({ totalTimeoutMs: 3000 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(settledAt! - start).toBe(3000); // the rest of the pause, then what is left: not the pause + 3 s
  });
});

describe('a user-written limiter shared by two clients keeps each call’s deadline', () => {
  // The client cannot tell such a limiter's pacing from a 429 pause another client met through it:
  // its whole wait counts, and the signal it is given aborts when the call's budget runs out.
  const limited = () => fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '5' }));

  /** What a user writes: holds every call until a pause it was told of has passed; knows nothing of budgets. */
  function naiveLimiter(options: { hearsSignal: boolean } = { hearsSignal: true }) {
    let pausedUntil = 0;
    const signals: (AbortSignal | undefined)[] = [];
    let released = 0;
    const limiter: RateLimiter = {
      acquire(signal) {
        signals.push(signal);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve(() => void (released += 1)), Math.max(0, pausedUntil - Date.now()));
          if (options.hearsSignal) signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
        });
      },
      pause(ms) {
        pausedUntil = Math.max(pausedUntil, Date.now() + ms);
      },
    };
    return { limiter, signals, released: () => released };
  }

  it('another client’s 429 pause: the signal given to acquire aborts at the deadline and the call rejects then, not 4 s later', async () => {
    const shared = naiveLimiter();
    await timed(makeClient(limited().fetch, { rateLimit: shared.limiter }).health({ totalTimeoutMs: 1000 }));
    const service = fakeService(json(200, HEALTH));
    const start = Date.now();
    const { error, settledAt } = await timed(makeClient(service.fetch, { rateLimit: shared.limiter }).health({ totalTimeoutMs: 1000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as Error).message).toMatch(/totalTimeoutMs \(1000 ms\).*not sent/);
    expect(settledAt! - start).toBe(1000);
    expect(shared.signals.at(-1)?.aborted).toBe(true);
    expect(service.requests).toHaveLength(0);
  });

  it('a limiter that ignores its signal too: the call still rejects at the deadline, and the token it hands out late is given back', async () => {
    const shared = naiveLimiter({ hearsSignal: false });
    await timed(makeClient(limited().fetch, { rateLimit: shared.limiter }).health({ totalTimeoutMs: 1000 }));
    const service = fakeService(json(200, HEALTH));
    const start = Date.now();
    const { error, settledAt } = await timed(makeClient(service.fetch, { rateLimit: shared.limiter }).health({ totalTimeoutMs: 1000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(settledAt! - start).toBe(1000);
    const before = shared.released();
    await vi.advanceTimersByTimeAsync(5000);
    expect(shared.released()).toBe(before + 1);
    expect(service.requests).toHaveLength(0);
  });

  it('a wait that ends within the budget is charged: the attempt after it has only the rest', async () => {
    const shared = naiveLimiter();
    shared.limiter.pause(600);
    const { error, settledAt } = await timed(makeClient(fakeService(silent).fetch, { rateLimit: shared.limiter, maxRetries: 0 }).health({ totalTimeoutMs: 1000 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('totalTimeoutMs');
    expect(settledAt).toBe(1000);
  });

  it('a limiter that says it honours the budget keeps its pacing free: its wait is neither cut nor charged', async () => {
    const service = fakeService(json(200, HEALTH));
    const pacing: RateLimiter = { honoursBudget: true, acquire: () => new Promise((resolve) => setTimeout(resolve, 3000)), pause: () => {} };
    const { value, settledAt } = await timed(makeClient(service.fetch, { rateLimit: pacing }).health({ totalTimeoutMs: 1000 }));
    expect(value).toEqual(HEALTH);
    expect(settledAt).toBe(3000);
  });

  it('PauseOutlastsDeadline, exported for custom limiters: RateLimitError with the pause left, nothing sent', async () => {
    const service = fakeService(json(200, HEALTH));
    const refusing: RateLimiter = {
      honoursBudget: true,
      acquire: async (_signal, budget?: AcquireBudget) => {
        throw new PauseOutlastsDeadline(budget!.remaining() + 2000);
      },
      pause: () => {},
    };
    const { error, settledAt } = await timed(makeClient(service.fetch, { rateLimit: refusing }).health({ totalTimeoutMs: 1000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3000);
    expect(settledAt).toBe(0);
    expect(service.requests).toHaveLength(0);
  });
});

describe('aborting the signal stops the call at once', () => {
  it('during a backoff wait: rejects with the signal’s reason, no further attempt', async () => {
    const service = fakeService(envelope(500, 'INTERNAL'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const { error, settledAt } = await timed(makeClient(service.fetch).health({ signal: controller.signal }));
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(settledAt).toBe(200);
    expect(service.requests).toHaveLength(1);
  });

  it('during a Retry-After wait, with a custom reason', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '30' }));
    const controller = new AbortController();
    const reason = new Error('shutting down');
    setTimeout(() => controller.abort(reason), 1000);
    const { error, settledAt } = await timed(makeClient(service.fetch).health({ signal: controller.signal }));
    expect(error).toBe(reason);
    expect(settledAt).toBe(1000);
  });

  it('while the body is being read', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const { error, settledAt } = await timed(makeClient(fakeService(trickling).fetch).health({ signal: controller.signal }));
    expect((error as Error).name).toBe('AbortError');
    expect(settledAt).toBe(50);
  });

  it('while queued behind the rate limiter', async () => {
    const service = fakeService(json(200, HEALTH));
    const client = makeClient(service.fetch, { rateLimit: { requestsPerMinute: 6, burst: 1 } });
    await timed(client.health());
    const controller = new AbortController();
    const start = Date.now();
    setTimeout(() => controller.abort(), 100);
    const { error, settledAt } = await timed(client.health({ signal: controller.signal }));
    expect((error as Error).name).toBe('AbortError');
    expect(settledAt! - start).toBe(100);
    expect(service.requests).toHaveLength(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const service = fakeService(json(200, HEALTH));
    const { error } = await timed(makeClient(service.fetch).health({ signal: AbortSignal.abort() }));
    expect((error as Error).name).toBe('AbortError');
    expect(service.requests).toHaveLength(0);
  });
});
