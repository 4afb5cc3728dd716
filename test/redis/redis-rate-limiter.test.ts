import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis as IoRedis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, IntegrationClient, RateLimiterUnavailableError, type Clock, type RateLimiter } from '../../src/index.ts';
import { redisRateLimiter, type RedisRateLimiterOptions } from '../../src/redis/index.ts';
import { createSandbox } from '../../src/sandbox/index.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../support/redis-server.ts';

const skip = redisSkipReason();
const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');

const connectRedis = (url: string) => createClient({ url }).on('error', () => {}).connect();

/**
 * A clock whose timers never fire but are recorded: what the limiter decided to wait, without
 * waiting. `now` may be skewed: the bucket runs on the Redis server's clock, so skew changes nothing.
 */
function recordingClock(skewMs = 0): Clock & { waits: number[] } {
  const waits: number[] = [];
  // The limiters below bound each Redis call with a 30 s timer: not a wait, left out.
  return { waits, now: () => Date.now() + skewMs, setTimeout: (_callback, ms) => (ms !== REDIS_TIMEOUT_MS && waits.push(ms), () => {}) };
}
const REDIS_TIMEOUT_MS = 30_000;

/** Lets the limiter run until it has decided to wait (or resolved). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

describe.skipIf(skip)('redisRateLimiter against a real redis-server', () => {
  let server: RedisServer;
  let redis: Awaited<ReturnType<typeof connectRedis>>;
  let prefixCount = 0;
  const opened: { close(): unknown }[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
    redis = await connectRedis(server.url);
  });
  afterAll(async () => {
    await redis?.close().catch(() => {});
    await server?.stop();
  });
  afterEach(async () => {
    for (const client of opened.splice(0)) await Promise.resolve(client.close()).catch(() => {});
  });

  /** A limiter on a fresh bucket (own prefix), attached as a client of key `k1` would. */
  function limiter(options: Partial<RedisRateLimiterOptions> & { prefix: string }, keyId = 'k1'): RateLimiter {
    const made = redisRateLimiter({ redis, redisTimeoutMs: REDIS_TIMEOUT_MS, ...options });
    made.attach?.({ keyId, logger: undefined });
    return made;
  }
  const freshPrefix = () => `t${++prefixCount}`;
  const prefixOf = (_bucket: RateLimiter) => `t${prefixCount}`;

  describe.each([0, 10 * 60_000, -10 * 60_000])('with the process clock off by %i ms', (skewMs) => {
    it('lets a burst through, then answers "wait" for the time one token takes', async () => {
      const clock = recordingClock(skewMs);
      const bucket = limiter({ prefix: freshPrefix(), requestsPerMinute: 60, burst: 3, clock, random: () => 0 });
      const first = await bucket.acquire();
      await bucket.acquire();
      await bucket.acquire();
      expect(typeof first).toBe('function'); // it left the full bucket: refilling waits for its answer
      first!();
      let fourthDone = false;
      void bucket.acquire().then(() => (fourthDone = true));
      await settle();
      expect(fourthDone).toBe(false);
      expect(clock.waits).toHaveLength(1);
      expect(clock.waits[0]).toBeGreaterThan(900);
      expect(clock.waits[0]).toBeLessThanOrEqual(1_000);
    });
  });

  it('a token taken from a full bucket holds refilling until its attempt has finished', async () => {
    const clock = recordingClock();
    const bucket = limiter({ prefix: freshPrefix(), requestsPerMinute: 60_000, burst: 2, clock, random: () => 0 });
    const finished = await bucket.acquire();
    await bucket.acquire();
    await new Promise((resolve) => setTimeout(resolve, 40)); // 40 tokens' worth at 1/ms, if refilling ran
    let thirdDone = false;
    void bucket.acquire().then(() => (thirdDone = true));
    await settle();
    expect(thirdDone).toBe(false);
    finished!();
    await vi.waitFor(() => expect(thirdDone).toBe(false)); // still waiting: its timer is the recording clock's
    const next = limiter({ prefix: prefixOf(bucket), requestsPerMinute: 60_000, burst: 2 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await next.acquire(); // refilling runs again since the finish
  });

  it('a 429 in one process pauses every process of the key, and the bucket restarts empty', async () => {
    const prefix = freshPrefix();
    const other = await createClient({ url: server.url }).on('error', () => {}).connect();
    opened.push(other);
    const first = limiter({ prefix, requestsPerMinute: 60, burst: 10 });
    const clock = recordingClock();
    const second = redisRateLimiter({ redis: other, prefix, requestsPerMinute: 60, burst: 10, clock, random: () => 0, redisTimeoutMs: REDIS_TIMEOUT_MS });
    second.attach?.({ keyId: 'k1', logger: undefined });
    first.pause(3_000);
    await vi.waitFor(async () => expect(Number(await redis.hGet(`${prefix}:rate:{k1}`, 'paused'))).toBeGreaterThan(0));
    void second.acquire();
    await settle();
    expect(clock.waits[0]).toBeGreaterThan(2_800);
    expect(clock.waits[0]).toBeLessThanOrEqual(3_000 + 50);

    const shortPrefix = freshPrefix();
    const paused = limiter({ prefix: shortPrefix, requestsPerMinute: 60, burst: 10 });
    paused.pause(20);
    await vi.waitFor(async () => expect(await redis.exists(`${shortPrefix}:rate:{k1}`)).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 40));
    const afterPause = recordingClock();
    const third = redisRateLimiter({ redis, prefix: shortPrefix, requestsPerMinute: 60, burst: 10, clock: afterPause, random: () => 0, redisTimeoutMs: REDIS_TIMEOUT_MS });
    third.attach?.({ keyId: 'k1', logger: undefined });
    void third.acquire();
    await settle();
    // Empty after the pause: the next token is most of a second away, not a burst of 10.
    expect(afterPause.waits[0]).toBeGreaterThan(800);
  });

  it('works with an ioredis client, and reloads the script after SCRIPT FLUSH', async () => {
    const io = new IoRedis(server.port, '127.0.0.1');
    opened.push({ close: () => io.quit() });
    const prefix = freshPrefix();
    const bucket = redisRateLimiter({ redis: io, prefix, requestsPerMinute: 60, burst: 2 });
    bucket.attach?.({ keyId: 'k1', logger: undefined });
    await bucket.acquire();
    await io.script('FLUSH');
    await bucket.acquire();
    expect(Number(await io.hget(`${prefix}:rate:{k1}`, 'tokens'))).toBeLessThan(1);
  });

  it('names the bucket by the key id and prefix, never the secret; one limiter serves one key', async () => {
    const prefix = freshPrefix();
    const made = redisRateLimiter({ redis, prefix });
    const client = new IntegrationClient({ apiKey: 'service_keyid42_supersecretpart', baseUrl: 'https://platform.example.com', rateLimit: made });
    expect(client).toBeDefined();
    await made.acquire();
    const keys = await redis.keys(`${prefix}:*`);
    expect(keys).toEqual([`${prefix}:rate:{keyid42}`]);
    expect(keys.join()).not.toContain('supersecret');
    expect(() => new IntegrationClient({ apiKey: 'service_keyid42_other', baseUrl: 'https://platform.example.com', rateLimit: made })).not.toThrow();
    expect(() => new IntegrationClient({ apiKey: 'service_another_x', baseUrl: 'https://platform.example.com', rateLimit: made })).toThrow(ConfigurationError);
  });

  it('rejects bad options at once with ConfigurationError', async () => {
    const closed = createClient({ url: server.url });
    expect(() => redisRateLimiter({ redis: closed })).toThrow(/not connected/);
    expect(() => redisRateLimiter({ redis: undefined as never })).toThrow(ConfigurationError);
    expect(() => redisRateLimiter({ redis: {} as never })).toThrow(/neither a node-redis nor an ioredis/);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => redisRateLimiter({ redis, requestsPerMinute: bad })).toThrow(ConfigurationError);
      expect(() => redisRateLimiter({ redis, burst: bad })).toThrow(ConfigurationError);
    }
    const lazy = new IoRedis(server.port, '127.0.0.1', { lazyConnect: true });
    expect(() => redisRateLimiter({ redis: lazy })).toThrow(/not connected/);
    lazy.disconnect();
  });

  it('a request waiting for a token rejects at once with its signal', async () => {
    const bucket = limiter({ prefix: freshPrefix(), requestsPerMinute: 1, burst: 1 });
    await bucket.acquire();
    const controller = new AbortController();
    const pending = bucket.acquire(controller.signal);
    await settle();
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });

  it('four processes on one key share its budget: no 429 after the first second, ≥ 95% of the allowed rate', async () => {
    const perSecond = 10;
    const burst = 10;
    const sandbox = await createSandbox({ rate: { perKey: { capacity: burst, refillPerSecond: perSecond }, perIp: false } });
    try {
      const prefix = freshPrefix();
      const children = Array.from({ length: 4 }, () =>
        run(process.execPath, ['--import', join(root, 'test/support/register-src.mjs'), join(import.meta.dirname, 'upsert-child.ts'), sandbox.url, sandbox.apiKey, server.url, '30', String(perSecond * 60), String(burst), prefix], { cwd: root, timeout: 50_000 }),
      );
      const outputs = (await Promise.all(children)).map(({ stdout }) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { created: number; sent: { at: number; status: number }[]; warnings: string[] });
      expect(outputs.map((o) => o.created)).toEqual([30, 30, 30, 30]);
      const sent = outputs.flatMap((o) => o.sent).sort((a, b) => a.at - b.at);
      expect(outputs.flatMap((o) => o.warnings)).toEqual([]);
      const start = sent[0]!.at;
      const elapsedS = (sent.at(-1)!.at - start) / 1000;
      expect(sent.filter((r) => r.status === 429 && r.at - start >= 1_000)).toEqual([]);
      const allowed = burst + perSecond * elapsedS;
      expect(sent.length / allowed).toBeGreaterThanOrEqual(0.95);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('Redis stopped mid-run: calls go on with the fallback (one warning), fail with fallback false, and Redis is used again once back', async () => {
    const own = await startRedisServer();
    const client = await createClient({ url: own.url, socket: { reconnectStrategy: () => 50 } }).on('error', () => {}).connect();
    const warn = vi.fn();
    const info = vi.fn();
    const shared = redisRateLimiter({ redis: client, prefix: 'fb', requestsPerMinute: 6_000, burst: 100, redisTimeoutMs: 200, retryRedisAfterMs: 100 });
    shared.attach?.({ keyId: 'k1', logger: { warn, info } });
    const strict = redisRateLimiter({ redis: client, prefix: 'fb', requestsPerMinute: 6_000, burst: 100, redisTimeoutMs: 200, fallback: false });
    strict.attach?.({ keyId: 'k1', logger: undefined });
    try {
      await shared.acquire();
      await own.kill();
      for (let i = 0; i < 5; i++) await shared.acquire();
      expect(warn).toHaveBeenCalledTimes(1);
      expect(JSON.stringify(warn.mock.calls)).not.toContain('redis://');
      await expect(strict.acquire()).rejects.toBeInstanceOf(RateLimiterUnavailableError);

      await own.restart();
      await vi.waitFor(
        async () => {
          await shared.acquire();
          expect(info).toHaveBeenCalled();
        },
        { timeout: 5_000, interval: 150 },
      );
      expect(await client.exists('fb:rate:{k1}')).toBe(1);
      await strict.acquire();
    } finally {
      await client.close().catch(() => {});
      await own.stop();
    }
  }, 20_000);
});
