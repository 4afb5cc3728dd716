// The limiter and its script against a real redis-server: burst, refill, the first-attempt
// discipline, pause, skew, signal, bad input, and Redis stopped and restarted under it. The script
// runs on Redis's clock, which no test can fake: where time must pass, the test waits what the
// script itself answered (tens of ms), never a guessed sleep.
import { createClient, createCluster, type RedisClientType } from 'redis';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/clock.ts';
import { ConfigurationError } from '../../src/errors/index.ts';
import { IntegrationClient } from 'integration-sdk';
import type { AcquireBudget, AttemptFinished, RateLimiter } from '../../src/transport/rate-limiter.ts';
import { RateLimiterUnavailableError, redisRateLimiter } from 'integration-sdk/redis';
import { RateLimitError } from '../../src/errors/index.ts';
import { HEALTH, envelope, fakeService, json, makeClient } from '../support/fake-service.ts';
import { connectedClient, freeze, RedisServer, skipRedis, startClusterNode } from './redis-server.ts';

const SECRET = 'Sk3cr3tV4lue';
let server: RedisServer;
let redis: RedisClientType;
let keyCounter = 0;
const freshKey = () => `key${process.pid}x${(keyCounter += 1)}`;

function recordingLogger() {
  const warnings: unknown[][] = [];
  const infos: unknown[][] = [];
  return { warnings, infos, logger: { warn: (...args: unknown[]) => warnings.push(args), info: (...args: unknown[]) => infos.push(args) } };
}

function attached(limiter: RateLimiter, keyId = freshKey()): RateLimiter {
  limiter.attach!({ keyId, logger: undefined });
  return limiter;
}

const WAITING = Symbol('waiting');
/** After the microtasks queued now, and any I/O already received, have run. */
const nextTurn = () => new Promise<typeof WAITING>((resolve) => setImmediate(() => resolve(WAITING)));

/**
 * Takes tokens while the limiter has one for the asking; returns how many and the finish
 * callbacks. An acquire that has neither resolved nor a script call in flight once its turn has
 * run is waiting for a token: it is aborted, and the drain ends. The limiter charges each script
 * call to the acquire's budget (`remaining()` before, `spend()` after), which says when one is in
 * flight; an in-process fallback resolves at once or waits. No time window, so a loaded machine
 * slowing Redis's answers cannot end a drain early, nor let the refill add tokens to it.
 */
async function drain(limiter: RateLimiter, max: number): Promise<{ taken: number; finishers: AttemptFinished[] }> {
  const finishers: AttemptFinished[] = [];
  let taken = 0;
  for (; taken < max; taken += 1) {
    const controller = new AbortController();
    let asking = false;
    let answered = () => {};
    const budget: AcquireBudget = {
      remaining: () => ((asking = true), 3_600_000),
      spend: () => {
        asking = false;
        answered();
      },
    };
    const outcome = limiter.acquire(controller.signal, budget).then((finished) => ({ finished }), () => undefined);
    let result = await Promise.race([outcome, nextTurn()]);
    while (result === WAITING && asking) {
      await Promise.race([outcome, new Promise<void>((resolve) => (answered = resolve))]);
      result = await Promise.race([outcome, nextTurn()]);
    }
    if (result === WAITING || result === undefined) {
      controller.abort(new Error('drained'));
      await outcome;
      break;
    }
    if (result.finished) finishers.push(result.finished);
  }
  return { taken, finishers };
}

describe.skipIf(skipRedis)('redisRateLimiter against redis-server', () => {
  beforeAll(async () => {
    server = await RedisServer.start();
    redis = await connectedClient(server.url);
    // The first call loads the script (NOSCRIPT, then EVAL): slower than the windows below.
    await attached(redisRateLimiter({ redis, requestsPerMinute: 60, burst: 1 })).acquire();
  });
  afterAll(async () => {
    redis?.destroy();
    await server?.stop();
  });

  describe('bad input throws ConfigurationError at once', () => {
    it.each([
      ['no client', () => ({ redis: undefined })],
      ['an object that is no Redis client', () => ({ redis: {} })],
      ['a node-redis client never connected', () => ({ redis: createClient({ url: server.url }) })],
      ['an ioredis client made with lazyConnect and never connected', () => ({ redis: new Redis(server.port, { lazyConnect: true }) })],
      ['a zero rate', () => ({ redis, requestsPerMinute: 0 })],
      ['a negative burst', () => ({ redis, burst: -1 })],
      ['an infinite rate', () => ({ redis, requestsPerMinute: Infinity })],
      ['a rate that is not a number', () => ({ redis, requestsPerMinute: '120' })],
      ['a NaN fallback rate', () => ({ redis, fallback: { requestsPerMinute: Number.NaN } })],
    ])('%s', (_, options) => {
      const build = () => redisRateLimiter(Object.assign({ redis, requestsPerMinute: 120, burst: 10 }, options()) as never);
      expect(build).toThrow(ConfigurationError);
    });

    it('a second API key on one limiter (one limiter serves one key)', () => {
      const limiter = redisRateLimiter({ redis, requestsPerMinute: 120, burst: 10 });
      limiter.attach!({ keyId: 'first', logger: undefined });
      limiter.attach!({ keyId: 'first', logger: undefined }); // a second client of the same key is fine
      expect(() => limiter.attach!({ keyId: 'second', logger: undefined })).toThrow(ConfigurationError);
      // As a user meets it: the second client's constructor throws, naming the rule.
      expect(() => new IntegrationClient({ apiKey: `service_second_${SECRET}`, baseUrl: 'http://127.0.0.1:9', rateLimit: limiter })).toThrow(/one limiter per key/);
    });
  });

  it('lets the burst go at once, then answers wait: one bucket per key, named from its id, never the secret', async () => {
    const keyId = freshKey();
    const limiter = redisRateLimiter({ redis, requestsPerMinute: 60, burst: 5, prefix: 'erp' });
    // The client tells the limiter its key through attach: the id, not the secret.
    new IntegrationClient({ apiKey: `service_${keyId}_${SECRET}`, baseUrl: 'http://127.0.0.1:9', rateLimit: limiter });
    const { taken } = await drain(limiter, 10);
    expect(taken).toBe(5);
    const keys = await redis.keys('erp:*');
    expect(keys).toEqual([`erp:{${keyId}}`]);
    expect(JSON.stringify(await redis.hGetAll(keys[0]!))).not.toContain(SECRET);
  });

  it('refills at the rate once the first attempt has finished, not before', async () => {
    // 600/min: a token every 100 ms. While the attempt that emptied the full bucket is unfinished,
    // no token comes back however long we wait.
    const limiter = attached(redisRateLimiter({ redis, requestsPerMinute: 600, burst: 3 }));
    const { taken, finishers } = await drain(limiter, 3);
    expect([taken, finishers.length]).toEqual([3, 1]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await drain(limiter, 5)).taken).toBe(0);
    finishers[0]!();
    await new Promise((resolve) => setTimeout(resolve, 250));
    const refilled = (await drain(limiter, 10)).taken;
    expect(refilled).toBeGreaterThanOrEqual(2);
    expect(refilled).toBeLessThanOrEqual(3); // 2.5 tokens, and a third within the window at most
  });

  it('a pause stores the 429 in the bucket: every limiter of the key waits, then the bucket restarts empty', async () => {
    const keyId = freshKey();
    // A burst the rate takes 5 s to refill: however late the acquire below runs on a loaded
    // machine, a bucket that restarted empty cannot be full again by then.
    const seen = attached(redisRateLimiter({ redis, requestsPerMinute: 60_000, burst: 5_000 }), keyId);
    const other = attached(redisRateLimiter({ redis, requestsPerMinute: 60_000, burst: 5_000 }), keyId);
    await drain(seen, 1);
    // Both limiters send on the one connection of `redis`: the pause reaches Redis before the take.
    const started = Date.now();
    seen.pause(150);
    const finished = await other.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(120);
    expect(finished).toBeUndefined(); // restarted empty: the token was refilled, not taken from a full bucket
  });

  it('a process whose clock is minutes off shares the same timeline (the script reads Redis TIME)', async () => {
    const keyId = freshKey();
    const skewed: Clock = { now: () => Date.now() - 7 * 60_000, setTimeout: systemClock.setTimeout };
    const ahead: Clock = { now: () => Date.now() + 11 * 60_000, setTimeout: systemClock.setTimeout };
    const a = attached(redisRateLimiter({ redis, requestsPerMinute: 60, burst: 4 }, { clock: skewed }), keyId);
    const b = attached(redisRateLimiter({ redis, requestsPerMinute: 60, burst: 4 }, { clock: ahead }), keyId);
    const first = await drain(a, 2);
    const second = await drain(b, 10);
    expect(first.taken + second.taken).toBe(4);
  });

  it('rejects at once with the signal reason while waiting, holding nothing', async () => {
    const limiter = attached(redisRateLimiter({ redis, requestsPerMinute: 1, burst: 1 }));
    await drain(limiter, 1);
    const controller = new AbortController();
    const pending = limiter.acquire(controller.signal);
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 30);
    const started = Date.now();
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('adds jitter from the injected random source to each wait', async () => {
    const firstSleep = async (random: () => number) => {
      const sleeps: number[] = [];
      const recording: Clock = { now: () => Date.now(), setTimeout: (callback, ms) => (ms !== 2000 && sleeps.push(ms), systemClock.setTimeout(callback, ms)) };
      const limiter = attached(redisRateLimiter({ redis, requestsPerMinute: 600, burst: 1 }, { clock: recording, random, commandTimeoutMs: 2000 }));
      (await limiter.acquire())?.();
      await limiter.acquire();
      return sleeps[0]!;
    };
    // A token every 100 ms: the script answers about 100 ms; the jitter adds at most 20 ms.
    const without = await firstSleep(() => 0);
    const most = await firstSleep(() => 0.999);
    expect(Number.isInteger(without)).toBe(true);
    expect(most - without).toBeGreaterThan(15);
    expect(most - without).toBeLessThan(25);
  });

  describe('Redis stopped and restarted', () => {
    it('falls back with one warning, keeps serving at the fallback rate, and comes back to the shared bucket', async () => {
      const own = await RedisServer.start();
      const client = await connectedClient(own.url);
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const { warnings, infos, logger } = recordingLogger();
        const keyId = freshKey();
        const limiter = redisRateLimiter({ redis: client, requestsPerMinute: 600, burst: 2, fallback: { requestsPerMinute: 60_000, burst: 3 } }, { probeIntervalMs: 50 });
        limiter.attach!({ keyId, logger });
        await drain(limiter, 2);
        await own.stop();
        while (client.isReady) await new Promise((resolve) => setTimeout(resolve, 5));
        // On the fallback: its own burst of 3 goes at once, though the shared bucket is empty.
        const during = await drain(limiter, 3);
        expect(during.taken).toBe(3);
        await drain(limiter, 3);
        expect(warnings).toHaveLength(1);
        expect(JSON.stringify(warnings)).not.toContain(SECRET);
        await own.restart();
        await new Promise<void>((resolve) => client.once('ready', resolve));
        await new Promise((resolve) => setTimeout(resolve, 60)); // the next probe is due
        await limiter.acquire();
        expect(infos).toHaveLength(1);
        expect(await client.exists(`integration-sdk:rate:{${keyId}}`)).toBe(1);
        expect(warnings).toHaveLength(1);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        client.destroy();
        await own.stop();
      }
    });

    it('back to the shared bucket on the first call after the client has reconnected, not a probe interval later', async () => {
      const own = await RedisServer.start();
      const client = await connectedClient(own.url);
      try {
        const { warnings, infos, logger } = recordingLogger();
        const keyId = freshKey();
        const limiter = redisRateLimiter({ redis: client, requestsPerMinute: 600, burst: 2, fallback: { requestsPerMinute: 60_000, burst: 3 } }, { probeIntervalMs: 600_000 });
        limiter.attach!({ keyId, logger });
        await own.stop();
        while (client.isReady) await new Promise((resolve) => setTimeout(resolve, 5));
        expect((await drain(limiter, 1)).taken).toBe(1);
        expect(warnings).toHaveLength(1);
        await own.restart();
        await new Promise<void>((resolve) => (client.isReady ? resolve() : client.once('ready', resolve)));
        (await limiter.acquire())?.();
        expect(infos).toHaveLength(1);
        expect(await client.exists(`integration-sdk:rate:{${keyId}}`)).toBe(1);
      } finally {
        client.destroy();
        await own.stop();
      }
    });

    it('fallback: false: calls fail only while Redis does not answer, the first one after it reconnects goes', async () => {
      const own = await RedisServer.start();
      const client = await connectedClient(own.url);
      try {
        const limiter = attached(redisRateLimiter({ redis: client, requestsPerMinute: 600, burst: 2, fallback: false }, { probeIntervalMs: 600_000 }));
        await own.stop();
        while (client.isReady) await new Promise((resolve) => setTimeout(resolve, 5));
        await expect(limiter.acquire()).rejects.toBeInstanceOf(RateLimiterUnavailableError);
        await own.restart();
        await new Promise<void>((resolve) => (client.isReady ? resolve() : client.once('ready', resolve)));
        await expect(limiter.acquire()).resolves.toBeTypeOf('function'); // a full bucket, in Redis again
      } finally {
        client.destroy();
        await own.stop();
      }
    });

    it('fallback: false rejects with RateLimiterUnavailableError, without an unhandled rejection', async () => {
      const own = await RedisServer.start();
      const client = new Redis(own.port, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
      client.on('error', () => {});
      await new Promise((resolve) => client.once('ready', resolve));
      try {
        const limiter = attached(redisRateLimiter({ redis: client, requestsPerMinute: 600, burst: 2, fallback: false }));
        await expect(limiter.acquire()).resolves.toBeDefined();
        await own.stop();
        await expect(limiter.acquire()).rejects.toBeInstanceOf(RateLimiterUnavailableError);
        const error = await limiter.acquire().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RateLimiterUnavailableError);
      } finally {
        client.disconnect();
        await own.stop();
      }
    });
  });

  describe('Redis frozen or slow (SIGSTOP: the connection open, no answers): calls keep their deadline', () => {
    const reachWarnings = (warnings: unknown[][]) => warnings.filter(([message]) => String(message).includes('cannot reach Redis'));

    it('a Redis answering in 1.5 s: the call goes on the fallback before the answer comes, with one warning, and Redis is used again once it answers', async () => {
      const own = await RedisServer.start();
      const redisClient = await connectedClient(own.url);
      const { warnings, infos, logger } = recordingLogger();
      const limiter = redisRateLimiter({ redis: redisClient, requestsPerMinute: 600, burst: 5 }, { probeIntervalMs: 50 });
      const service = fakeService(json(200, HEALTH));
      const client = makeClient(service.fetch, { rateLimit: limiter, logger, totalTimeoutMs: 3000 });
      let thaw = () => {};
      try {
        await client.health(); // the shared bucket is in use
        thaw = await freeze(own.url);
        const started = Date.now();
        const thawTimer = setTimeout(thaw, 1500);
        await Promise.all([client.health(), client.health(), client.health()]);
        const elapsed = Date.now() - started;
        clearTimeout(thawTimer);
        thaw();
        // Before its answer, well inside the deadline (the command timeout is 500 ms, once more if
        // this process stalled on a loaded machine).
        expect(elapsed).toBeLessThan(1500);
        expect(reachWarnings(warnings)).toHaveLength(1);
        await new Promise((resolve) => setTimeout(resolve, 60)); // the next probe is due
        await client.health();
        expect(infos.filter(([message]) => String(message).includes('reaches Redis again'))).toHaveLength(1);
        expect(service.requests).toHaveLength(5);
      } finally {
        thaw();
        redisClient.destroy();
        await own.stop();
      }
    });

    it('a frozen Redis: concurrent calls complete well within totalTimeoutMs on the fallback, not one probe after another', async () => {
      const own = await RedisServer.start();
      const redisClient = await connectedClient(own.url);
      const { warnings, logger } = recordingLogger();
      const limiter = redisRateLimiter({ redis: redisClient, requestsPerMinute: 600, burst: 5, fallback: { requestsPerMinute: 60_000, burst: 20 } }, { probeIntervalMs: 200 });
      const client = makeClient(fakeService(json(200, HEALTH)).fetch, { rateLimit: limiter, logger });
      const thaw = await freeze(own.url);
      try {
        const durations: number[] = [];
        const timedCall = async () => {
          const started = Date.now();
          await client.health({ totalTimeoutMs: 3000 });
          durations.push(Date.now() - started);
        };
        for (let round = 0; round < 3; round += 1) {
          await Promise.all(Array.from({ length: 5 }, timedCall));
          await new Promise((resolve) => setTimeout(resolve, 250)); // a probe is due again: it meets the frozen Redis
        }
        // At most one command timeout (a few hundred ms) per call: callers on the fallback are not held
        // in line behind the one probing, nor does each of them probe in turn.
        expect(durations).toHaveLength(15);
        expect(Math.max(...durations)).toBeLessThan(1500);
        expect(reachWarnings(warnings)).toHaveLength(1);
      } finally {
        thaw();
        redisClient.destroy();
        await own.stop();
      }
    });

    it('fallback: false: RateLimiterUnavailableError within the deadline, also a deadline shorter than the command timeout', async () => {
      const own = await RedisServer.start();
      const redisClient = await connectedClient(own.url);
      const service = fakeService(json(200, HEALTH));
      const client = makeClient(service.fetch, { rateLimit: redisRateLimiter({ redis: redisClient, requestsPerMinute: 600, burst: 5, fallback: false }, { commandTimeoutMs: 10_000 }) });
      const thaw = await freeze(own.url);
      try {
        const started = Date.now();
        const error = await client.health({ totalTimeoutMs: 400 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RateLimiterUnavailableError);
        expect(Date.now() - started).toBeLessThan(1000); // 400 ms and the scheduling of a loaded machine, not 10 s
        expect(service.requests).toHaveLength(0);
      } finally {
        thaw();
        redisClient.destroy();
        await own.stop();
      }
    });
  });

  describe('a 429 pause counts against every call’s deadline, whoever met it', () => {
    it('another process’s 429 (stored in Redis) and a second client of the same limiter: RateLimitError at once, nothing sent', async () => {
      const keyId = freshKey();
      const apiKey = `service_${keyId}_${SECRET}`;
      const limiterA = redisRateLimiter({ redis, requestsPerMinute: 600, burst: 5 });
      const limiterB = redisRateLimiter({ redis, requestsPerMinute: 600, burst: 5 }); // another process
      const limited = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '5' }));
      const first = makeClient(limited.fetch, { apiKey, rateLimit: limiterA });
      // Its own Retry-After (5 s) is past its deadline: RateLimitError, and the key is paused in Redis.
      await expect(first.health({ totalTimeoutMs: 1000 })).rejects.toBeInstanceOf(RateLimitError);
      for (const limiter of [limiterA, limiterB]) {
        const service = fakeService(json(200, HEALTH));
        const client = makeClient(service.fetch, { apiKey, rateLimit: limiter });
        const started = Date.now();
        const error = await client.health({ totalTimeoutMs: 1000 }).catch((e: unknown) => e);
        expect(Date.now() - started).toBeLessThan(1000);
        expect(error).toBeInstanceOf(RateLimitError);
        expect((error as RateLimitError).retryAfterMs).toBeGreaterThan(1000);
        expect(service.requests).toHaveLength(0);
      }
    });

    it('pacing is not: a call queued for a token longer than its totalTimeoutMs still goes (the limiter honours the budget)', async () => {
      const keyId = freshKey();
      const service = fakeService(json(200, HEALTH));
      const client = makeClient(service.fetch, { apiKey: `service_${keyId}_${SECRET}`, rateLimit: redisRateLimiter({ redis, requestsPerMinute: 60, burst: 1 }) });
      await client.health();
      // The bucket is empty: the next token comes about 1 s later, three times this call's budget.
      await expect(client.health({ totalTimeoutMs: 300, timeoutMs: 300 })).resolves.toEqual(HEALTH);
      expect(service.requests).toHaveLength(2);
      expect(service.requests[1]!.at - service.requests[0]!.at).toBeGreaterThanOrEqual(900);
    });

    it('a pause shorter than the deadline is waited out and counted: the attempt after it has only the rest', async () => {
      const keyId = freshKey();
      const apiKey = `service_${keyId}_${SECRET}`;
      const paused = attached(redisRateLimiter({ redis, requestsPerMinute: 600, burst: 5 }), keyId);
      paused.pause(600);
      await new Promise((resolve) => setTimeout(resolve, 20)); // the pause reaches Redis
      const silent = fakeService(() => new Promise<Response>(() => {}));
      const client = makeClient(silent.fetch, { apiKey, rateLimit: redisRateLimiter({ redis, requestsPerMinute: 600, burst: 5 }) });
      const started = Date.now();
      const error = await client.health({ totalTimeoutMs: 1000, maxRetries: 0 }).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect((error as Error).message).toContain('totalTimeoutMs');
      expect(silent.requests.length).toBe(1);
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(1400); // about 1000: the pause, then what was left, not the pause plus 1000
    });
  });

  describe('Redis clients given as they are', () => {
    /** The first acquire waits for the connection (however long a loaded machine takes), then takes the rest of the burst from Redis: the fallback's would be 1. */
    async function expectWaitedForConnection(client: Parameters<typeof redisRateLimiter>[0]['redis']): Promise<void> {
      const { warnings, logger } = recordingLogger();
      const keyId = freshKey();
      const limiter = redisRateLimiter({ redis: client, requestsPerMinute: 60, burst: 3 });
      limiter.attach!({ keyId, logger });
      expect(await limiter.acquire()).toBeTypeOf('function');
      expect((await drain(limiter, 10)).taken).toBe(2);
      expect(warnings).toEqual([]);
      expect(await redis.exists(`integration-sdk:rate:{${keyId}}`)).toBe(1);
    }

    it('an ioredis client used at once, still connecting: the limiter waits for it rather than falling back', async () => {
      const client = new Redis(server.port); // status 'connecting': the usual way to use ioredis
      try {
        await expectWaitedForConnection(client);
      } finally {
        client.disconnect();
      }
    });

    it('a node-redis client whose connect() has not resolved yet: waited for too', async () => {
      const client = createClient({ url: server.url }).on('error', () => {});
      const connecting = client.connect();
      try {
        await expectWaitedForConnection(client);
      } finally {
        await connecting;
        client.destroy();
      }
    });

    it('a node-redis client without an error listener (as in the design example): its outage does not crash the process', async () => {
      const own = await RedisServer.start();
      const client = await createClient({ url: own.url, socket: { reconnectStrategy: () => 50 } }).connect();
      try {
        const { warnings, logger } = recordingLogger();
        const limiter = redisRateLimiter({ redis: client, requestsPerMinute: 600, burst: 2, fallback: { requestsPerMinute: 60_000, burst: 3 } });
        limiter.attach!({ keyId: freshKey(), logger });
        // An EventEmitter throws an 'error' event nobody listens to: node-redis emits them while it reconnects.
        expect(() => client.emit('error', new Error('Socket closed unexpectedly'))).not.toThrow();
        await own.stop();
        while (client.isReady) await new Promise((resolve) => setTimeout(resolve, 5));
        expect((await drain(limiter, 3)).taken).toBe(3);
        expect(warnings).toHaveLength(1);
      } finally {
        client.destroy();
        await own.stop();
      }
    });

    it('node-redis and ioredis Cluster clients: one key, so one slot', { timeout: 30_000 }, async () => {
      const node = await startClusterNode();
      const nodeCluster = await createCluster({ rootNodes: [{ url: node.url }] }).on('error', () => {}).connect();
      const ioCluster = new Cluster([{ host: '127.0.0.1', port: node.port }]);
      ioCluster.on('error', () => {});
      try {
        const keyId = freshKey();
        const { warnings, logger } = recordingLogger();
        const a = redisRateLimiter({ redis: nodeCluster, requestsPerMinute: 60, burst: 4 });
        const b = redisRateLimiter({ redis: ioCluster, requestsPerMinute: 60, burst: 4 });
        a.attach!({ keyId, logger });
        b.attach!({ keyId, logger });
        const first = await drain(a, 2);
        await nodeCluster.sendCommand(undefined, true, ['SCRIPT', 'FLUSH']); // NOSCRIPT on the next EVALSHA
        await b.acquire(); // the ioredis cluster, given still connecting, is waited for
        const second = await drain(b, 10);
        expect([first.taken, second.taken]).toEqual([2, 1]);
        expect(warnings).toEqual([]);
        expect(await nodeCluster.exists(`integration-sdk:rate:{${keyId}}`)).toBe(1);
      } finally {
        ioCluster.disconnect();
        nodeCluster.destroy();
        node.stop();
      }
    });
  });

  it('used on its own (never given to an IntegrationClient): one bucket per prefix, paced and abortable', async () => {
    const prefix = `alone${freshKey()}`;
    const a = redisRateLimiter({ redis, requestsPerMinute: 1, burst: 2, prefix });
    const b = redisRateLimiter({ redis, requestsPerMinute: 1, burst: 2, prefix });
    expect((await drain(a, 1)).taken).toBe(1);
    expect((await drain(b, 10)).taken).toBe(1);
    expect(await redis.keys(`${prefix}:*`)).toHaveLength(1);
    const reason = new Error('caller gave up');
    const controller = new AbortController();
    const pending = a.acquire(controller.signal);
    setTimeout(() => controller.abort(reason), 30);
    await expect(pending).rejects.toBe(reason);
  });

  it('works the same with ioredis, and reloads the script after SCRIPT FLUSH (NOSCRIPT)', async () => {
    const client = new Redis(server.port);
    await new Promise((resolve) => client.once('ready', resolve));
    try {
      const limiter = attached(redisRateLimiter({ redis: client, requestsPerMinute: 60, burst: 3 }));
      await client.script('FLUSH');
      expect((await drain(limiter, 10)).taken).toBe(3);
    } finally {
      client.disconnect();
    }
  });
});
