import { raceAbort, sleep, systemClock, type Clock } from '../clock.ts';
import { ConfigurationError } from '../errors/index.ts';
import type { Logger } from '../transport/logger.ts';
import { chargePause, TokenBucket, type AcquireBudget, type AttemptFinished, type RateLimiter, type RateLimiterClient } from '../transport/rate-limiter.ts';
import { answerOf, type BucketAnswer, type BucketOp } from './bucket-script.ts';
import { RateLimiterUnavailableError } from '../errors/index.ts';
import { scriptRunnerFor, type RedisClientLike } from './redis-client.ts';
import { RedisLink } from './redis-link.ts';

/** Options of {@link redisRateLimiter}. */
export interface RedisRateLimiterOptions {
  /** A connected node-redis (`redis` >= 5) or ioredis client or cluster, given as it is. */
  redis: RedisClientLike;
  /** The key's rate, shared by every process using it. */
  requestsPerMinute: number;
  /** Requests that may go at once after a quiet period. */
  burst: number;
  /** Prepended to the bucket's Redis key, to keep applications apart. @default 'integration-sdk:rate' */
  prefix?: string;
  /**
   * While Redis does not answer: an in-process bucket at this rate (other processes may be falling
   * back too), or `false` to fail calls with `RateLimiterUnavailableError`.
   * @default { requestsPerMinute: requestsPerMinute / 4, burst: max(1, floor(burst / 4)) }
   */
  fallback?: { requestsPerMinute?: number; burst?: number } | false;
}

/** Time, randomness and patience, injectable so that tests need no real sleeps. */
export interface RedisRateLimiterSeams {
  clock?: Clock;
  /** Uniform in [0, 1): the jitter added to each wait. @default Math.random */
  random?: () => number;
  /**
   * A script call not answered by then (or by the end of the caller's `totalTimeoutMs`, if sooner)
   * counts as Redis unavailable: a slow or frozen Redis is fallen back from like a stopped one.
   * @default 500
   */
  commandTimeoutMs?: number;
  /**
   * On the fallback, Redis is asked again at most this often (by an acquire, never by a timer), or
   * at once by the first acquire after the client has reconnected. @default 1000
   */
  probeIntervalMs?: number;
}

/**
 * How long one script call may take before Redis counts as unavailable. A healthy Redis answers in
 * about a millisecond; a slow one (1.5 s) or a frozen one (SIGSTOP: the connection open, no answer)
 * must not hold calls for seconds, so the fallback takes over after this, well inside any deadline.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 500;
/** A first attempt whose process never reported it finished counts as finished after this. */
export const STALE_ATTEMPT_MS = 30_000;
/** Processes woken together would ask at the same millisecond; at most this much is added. */
export const MAX_JITTER_MS = 20;
/** The bucket of a limiter used on its own, never given to a client: `_` is never in a key id. */
const UNNAMED_KEY = '_default';

/**
 * One rate budget per API key shared by every process using it, kept in Redis (see
 * `docs/rate-limits.md`). Serves the clients of ONE key: a second key id throws `ConfigurationError`.
 * Used on its own (never given to a client), its bucket is `<prefix>:{_default}`.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { redisRateLimiter } from 'integration-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).on('error', () => {}).connect();
 * const client = new IntegrationClient({
 *   apiKey, baseUrl,
 *   rateLimit: redisRateLimiter({ redis, requestsPerMinute: 120, burst: 120 }),
 * });
 * ```
 */
export function redisRateLimiter(options: RedisRateLimiterOptions, seams: RedisRateLimiterSeams = {}): RateLimiter {
  return new RedisRateLimiter(options, seams);
}

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0)) throw new ConfigurationError(`redisRateLimiter: ${name} must be a finite number > 0`);
  return value;
}

class RedisRateLimiter implements RateLimiter {
  /** Pauses and round trips are charged to the call's budget; pacing is not (shared-rate-limit.md). */
  readonly honoursBudget = true;
  readonly #link: RedisLink;
  readonly #args: { capacity: string; perMs: string };
  readonly #prefix: string;
  readonly #fallback: TokenBucket | undefined;
  readonly #clock: Clock;
  readonly #random: () => number;
  #keyId: string | undefined;
  #logger: Partial<Logger> | undefined;
  /** Local callers ask Redis one at a time: waking them all for each token would only add round trips. */
  #turn: Promise<void> = Promise.resolve();
  /** Holds this process's callers at once after a 429, before Redis has stored the pause. */
  #pausedUntil = 0;

  constructor(options: RedisRateLimiterOptions, seams: RedisRateLimiterSeams) {
    if (typeof options !== 'object' || options === null) throw new ConfigurationError('redisRateLimiter needs { redis, requestsPerMinute, burst }');
    const requestsPerMinute = positive('requestsPerMinute', options.requestsPerMinute);
    const burst = positive('burst', options.burst);
    if (burst < 1) throw new ConfigurationError('redisRateLimiter: burst must be ≥ 1');
    const runner = scriptRunnerFor(options.redis);
    this.#args = { capacity: String(burst), perMs: String(requestsPerMinute / 60_000) };
    if (options.prefix !== undefined && (typeof options.prefix !== 'string' || options.prefix === '')) throw new ConfigurationError('redisRateLimiter: prefix must be a non-empty string');
    this.#prefix = options.prefix ?? 'integration-sdk:rate';
    this.#clock = seams.clock ?? systemClock;
    this.#random = seams.random ?? Math.random;
    let fallbackRate = 0;
    if (options.fallback !== false) {
      const fallback = options.fallback ?? {};
      fallbackRate = positive('fallback.requestsPerMinute', fallback.requestsPerMinute ?? requestsPerMinute / 4);
      const fallbackBurst = positive('fallback.burst', fallback.burst ?? Math.max(1, Math.floor(burst / 4)));
      this.#fallback = new TokenBucket({ requestsPerMinute: fallbackRate, burst: fallbackBurst }, this.#clock);
    }
    const using = this.#fallback ? `an in-process bucket at ${fallbackRate} requests/min` : 'nothing (fallback: false): calls fail';
    this.#link = new RedisLink({
      runner,
      clock: this.#clock,
      commandTimeoutMs: seams.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      probeIntervalMs: seams.probeIntervalMs ?? 1000,
      hasFallback: this.#fallback !== undefined,
      messages: {
        unreachable: `integration-sdk: the shared rate limiter cannot reach Redis; using ${using} until it answers again`,
        reachable: 'integration-sdk: the shared rate limiter reaches Redis again',
      },
      logger: () => this.#logger,
      fields: () => ({ keyId: this.#keyId }),
    });
  }

  attach({ keyId, logger }: RateLimiterClient): void {
    if (this.#keyId !== undefined && this.#keyId !== keyId) {
      throw new ConfigurationError('redisRateLimiter: this limiter already serves another API key; make one limiter per key');
    }
    this.#keyId = keyId;
    this.#logger ??= logger;
  }

  async acquire(signal?: AbortSignal, budget?: AcquireBudget): Promise<AttemptFinished | undefined> {
    signal?.throwIfAborted();
    // On the fallback, only a caller whose probe is due asks Redis; the others are served by the
    // fallback at once, never held in line behind a probe that a frozen Redis makes last the whole
    // command timeout (one such probe per caller in line is what held calls seconds past their deadline).
    const onFallback = this.#link.onFallback;
    const probing = onFallback && this.#link.claimProbe();
    if (onFallback && !probing) return this.#fallbackAcquire(signal, budget);
    const previous = this.#turn;
    let release!: () => void;
    this.#turn = new Promise((resolve) => (release = resolve));
    try {
      await (signal ? raceAbort(previous, signal) : previous);
      return await this.#acquireInTurn(signal, budget, probing);
    } finally {
      if (probing) this.#link.probeDone();
      // An aborted caller leaves the line at once, but the next one still waits for the one before.
      void previous.then(release);
    }
  }

  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + ms);
    this.#fallback?.pause(ms);
    if (this.#link.onFallback) return;
    this.#ask('pause', String(Math.ceil(ms))).catch((error: unknown) => this.#link.failed(error));
  }

  async #acquireInTurn(signal: AbortSignal | undefined, budget: AcquireBudget | undefined, probing: boolean): Promise<AttemptFinished | undefined> {
    for (;;) {
      // A 429 pause (this process's, or stored in Redis by another) counts against the caller's
      // deadline and is refused when it would end past it; waiting for a token does not count.
      const paused = this.#pausedUntil - this.#clock.now();
      if (paused > 0) {
        chargePause(budget, paused);
        await sleep(this.#clock, paused, signal);
        continue;
      }
      // The caller ahead in line found Redis unavailable: no second wait for the same silence.
      if (this.#link.onFallback && !probing) return this.#fallbackAcquire(signal, budget);
      let answer: BucketAnswer;
      try {
        answer = await this.#ask('take', '0', signal, budget);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        this.#link.failed(error);
        return this.#fallbackAcquire(signal, budget);
      }
      this.#link.answered();
      if (answer.go) return answer.attemptId > 0 ? this.#finisher(answer.attemptId) : undefined;
      const jitter = this.#random() * Math.min(MAX_JITTER_MS, answer.waitMs / 4);
      if (answer.paused) chargePause(budget, answer.waitMs + jitter);
      await sleep(this.#clock, answer.waitMs + jitter, signal);
    }
  }

  #fallbackAcquire(signal: AbortSignal | undefined, budget: AcquireBudget | undefined): Promise<AttemptFinished | undefined> {
    if (!this.#fallback) return Promise.reject(new RateLimiterUnavailableError('the shared rate limiter cannot reach Redis in time and has no fallback (fallback: false); the call was not sent'));
    return this.#fallback.acquire(signal, budget);
  }

  /** Tells the bucket that the attempt of a token taken from it when full has finished. */
  #finisher(attemptId: number): AttemptFinished {
    let called = false;
    return () => {
      if (called) return;
      called = true;
      // If this is lost, the script counts the attempt finished after STALE_ATTEMPT_MS.
      this.#ask('finish', String(attemptId)).catch(() => {});
    };
  }

  /** One script call on this key's bucket (see `RedisLink.ask`). */
  async #ask(op: BucketOp, argument: string, signal?: AbortSignal, budget?: AcquireBudget): Promise<BucketAnswer> {
    const key = `${this.#prefix}:{${this.#keyId ?? UNNAMED_KEY}}`;
    return answerOf(await this.#link.ask([key], [op, this.#args.capacity, this.#args.perMs, argument, String(STALE_ATTEMPT_MS)], signal, budget));
  }
}
