import { raceAbort, sleep, systemClock, type Clock } from '../clock.ts';
import { ConfigurationError, RateLimiterUnavailableError } from '../errors/index.ts';
import type { Logger } from '../transport/logger.ts';
import { TokenBucket, type AttemptFinished, type RateLimiter, type RateLimiterClient } from '../transport/rate-limiter.ts';
import { takeAnswerOf, type BucketOp } from './bucket-script.ts';
import { scriptRunnerFor, type RedisClientLike, type ScriptRunner } from './redis-client.ts';

/** Options of `redisRateLimiter`. */
export interface RedisRateLimiterOptions {
  /** A connected node-redis (>= 5) or ioredis client or cluster. The limiter never closes it. */
  redis: RedisClientLike;
  /** The key's rate, as the service enforces it (spec 8). @default 120 */
  requestsPerMinute?: number;
  /** Requests that may go at once after a quiet period. @default 120 */
  burst?: number;
  /** Prefix of the bucket's Redis key, so that several applications can share one Redis. @default 'integration-sdk' */
  prefix?: string;
  /**
   * While Redis does not answer: an in-process bucket at `requestsPerMinute` (default a quarter of
   * the rate, since other processes may be falling back too), or `false` to fail calls with
   * `RateLimiterUnavailableError` instead.
   */
  fallback?: { requestsPerMinute?: number } | false;
  /**
   * How long one Redis call may take before Redis counts as unavailable. Generous: a process whose
   * event loop is busy (starting up, a CPU-bound task) reads even a fast answer late. @default 2000
   */
  redisTimeoutMs?: number;
  /** While on the fallback, how often a request tries Redis again. @default 5000 */
  retryRedisAfterMs?: number;
  /** Time seam for tests (the bucket itself runs on the Redis server's clock). */
  clock?: Clock;
  /** Jitter source for tests. @default Math.random */
  random?: () => number;
}

/**
 * A holder of a full bucket's refill that never reports back is ignored after this: its process
 * died, or its `take` timed out here after Redis had run it (so no `finish` will come). Short,
 * because every process of the key waits meanwhile; an attempt longer than this only lets the
 * refill start a little early.
 */
const STALE_HOLD_MS = 5_000;

/**
 * One API key's budget shared by every process that uses it, in one Redis hash (see
 * `BUCKET_SCRIPT`). Pass it as the client's `rateLimit`.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { IntegrationClient } from 'integration-sdk';
 * import { redisRateLimiter } from 'integration-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).on('error', () => {}).connect();
 * const client = new IntegrationClient({
 *   apiKey: process.env.INTEGRATION_API_KEY!,
 *   baseUrl: 'https://platform.example.com',
 *   rateLimit: redisRateLimiter({ redis, requestsPerMinute: 120, burst: 120 }),
 * });
 * ```
 */
export function redisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  return new RedisRateLimiter(options);
}

class RedisRateLimiter implements RateLimiter {
  readonly #run: ScriptRunner;
  readonly #capacity: number;
  readonly #tokensPerMs: number;
  readonly #prefix: string;
  readonly #fallback: TokenBucket | undefined;
  readonly #fallbackRequestsPerMinute: number | undefined;
  readonly #redisTimeoutMs: number;
  readonly #retryRedisAfterMs: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  #keyId: string | undefined;
  #logger: Partial<Logger> | undefined;
  /** Set while Redis is unavailable: when it last failed. */
  #failedAt: number | undefined;
  /** A 429 seen by this process: no need to ask Redis before it ends. */
  #pausedUntil = 0;

  constructor(options: RedisRateLimiterOptions) {
    if (typeof options !== 'object' || options === null) throw new ConfigurationError('redisRateLimiter needs options: { redis, requestsPerMinute, burst }');
    this.#run = scriptRunnerFor(options.redis);
    const requestsPerMinute = positive('requestsPerMinute', options.requestsPerMinute ?? 120);
    this.#capacity = positive('burst', options.burst ?? 120);
    if (this.#capacity < 1) throw new ConfigurationError('redisRateLimiter: burst must be a number ≥ 1');
    this.#tokensPerMs = requestsPerMinute / 60_000;
    const prefix = options.prefix ?? 'integration-sdk';
    if (typeof prefix !== 'string') throw new ConfigurationError('redisRateLimiter: prefix must be a string');
    this.#prefix = prefix;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#redisTimeoutMs = positive('redisTimeoutMs', options.redisTimeoutMs ?? 2_000);
    this.#retryRedisAfterMs = positive('retryRedisAfterMs', options.retryRedisAfterMs ?? 5_000);
    if (options.fallback === false) {
      this.#fallback = undefined;
      this.#fallbackRequestsPerMinute = undefined;
    } else {
      const fallbackRate = positive('fallback.requestsPerMinute', options.fallback?.requestsPerMinute ?? requestsPerMinute / 4);
      this.#fallbackRequestsPerMinute = fallbackRate;
      this.#fallback = new TokenBucket({ requestsPerMinute: fallbackRate, burst: Math.max(1, Math.floor(this.#capacity / 4)) }, this.#clock);
    }
  }

  attach(client: RateLimiterClient): void {
    if (this.#keyId !== undefined && this.#keyId !== client.keyId) {
      throw new ConfigurationError('redisRateLimiter: this limiter already serves another API key; create one limiter per key');
    }
    this.#keyId = client.keyId;
    this.#logger ??= client.logger;
  }

  async acquire(signal?: AbortSignal): Promise<AttemptFinished | undefined> {
    signal?.throwIfAborted();
    const key = this.#bucketKey();
    for (;;) {
      const localPause = this.#pausedUntil - this.#clock.now();
      if (localPause > 0) await sleep(this.#clock, localPause, signal);
      // On the fallback, Redis is asked again only now and then (without fallback, every call asks).
      if (this.#fallback && this.#failedAt !== undefined && this.#clock.now() - this.#failedAt < this.#retryRedisAfterMs) return this.#fallback.acquire(signal);
      let reply: unknown;
      try {
        reply = await this.#call(key, 'take', 0, signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        this.#redisFailed(error);
        return this.#fromFallback(signal);
      }
      this.#redisAnswered();
      const answer = takeAnswerOf(reply);
      if (answer.go) return answer.fromFullBucket ? this.#finishOnce(key) : undefined;
      // Processes woken together must not ask again together.
      await sleep(this.#clock, answer.waitMs + this.#random() * Math.min(50, 5 + answer.waitMs / 10), signal);
    }
  }

  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + ms);
    this.#fallback?.pause(ms);
    if (this.#keyId === undefined) return;
    // Every process of the key: the pause is stored in the shared bucket.
    this.#call(this.#bucketKey(), 'pause', ms).then(
      () => this.#redisAnswered(),
      (error: unknown) => this.#redisFailed(error),
    );
  }

  #bucketKey(): string {
    if (this.#keyId === undefined) throw new ConfigurationError('redisRateLimiter: pass the limiter to a client (new IntegrationClient({ rateLimit })) before using it');
    // The hash tag keeps the bucket in one Redis Cluster slot.
    return `${this.#prefix}:rate:{${this.#keyId}}`;
  }

  /** One script call, bounded by `redisTimeoutMs` (a client reconnecting may queue commands for long). */
  #call(key: string, op: BucketOp, pauseMs: number, signal?: AbortSignal): Promise<unknown> {
    const args = [op, String(this.#capacity), String(this.#tokensPerMs), String(Math.ceil(pauseMs)), String(STALE_HOLD_MS)];
    const deadline = new AbortController();
    const cancel = this.#clock.setTimeout(() => deadline.abort(new Error(`Redis did not answer within ${this.#redisTimeoutMs} ms`)), this.#redisTimeoutMs);
    const onAbort = () => deadline.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    return raceAbort(Promise.resolve().then(() => this.#run(key, args)), deadline.signal).finally(() => {
      cancel();
      signal?.removeEventListener('abort', onAbort);
    });
  }

  #finishOnce(key: string): AttemptFinished {
    let called = false;
    return () => {
      if (called) return;
      called = true;
      // Refilling starts when this answer is in; a failure here is covered by the stale-hold limit.
      this.#call(key, 'finish', 0).catch((error: unknown) => this.#redisFailed(error));
    };
  }

  #fromFallback(signal: AbortSignal | undefined): Promise<AttemptFinished | undefined> {
    if (this.#fallback === undefined) {
      return Promise.reject(new RateLimiterUnavailableError('the shared rate limiter cannot reach Redis, and fallback is false: no request was sent'));
    }
    return this.#fallback.acquire(signal);
  }

  #redisFailed(error: unknown): void {
    const first = this.#failedAt === undefined;
    this.#failedAt = this.#clock.now();
    if (!first) return;
    // Name and code only: a client's message may carry its connection URL.
    const reason = error instanceof Error ? ((error as { code?: string }).code ?? error.name) : typeof error;
    if (this.#fallback === undefined) {
      this.#logger?.warn?.('integration-sdk rate limiter: Redis is unavailable; calls fail until it answers (fallback: false)', { reason });
    } else {
      this.#logger?.warn?.('integration-sdk rate limiter: Redis is unavailable; pacing this process with an in-process bucket until it answers', { reason, requestsPerMinute: this.#fallbackRequestsPerMinute });
    }
  }

  #redisAnswered(): void {
    if (this.#failedAt === undefined) return;
    this.#failedAt = undefined;
    this.#logger?.info?.('integration-sdk rate limiter: Redis answers again; back to the shared bucket');
  }
}

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0)) throw new ConfigurationError(`redisRateLimiter: ${name} must be a finite number > 0`);
  return value;
}
