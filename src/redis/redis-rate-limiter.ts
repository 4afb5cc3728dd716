import { raceAbort, sleep, systemClock, type Clock } from '../clock.ts';
import { ConfigurationError } from '../errors/index.ts';
import type { Logger } from '../transport/logger.ts';
import { chargePause, TokenBucket, type AcquireBudget, type AttemptFinished, type RateLimiter, type RateLimiterClient } from '../transport/rate-limiter.ts';
import { answerOf, type BucketAnswer, type BucketOp } from './bucket-script.ts';
import { RateLimiterUnavailableError } from '../errors/index.ts';
import { scriptRunnerFor, type RedisClientLike, type ScriptRunner } from './redis-client.ts';

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
const DEFAULT_COMMAND_TIMEOUT_MS = 500;
/** A command timer firing this much late says this process stalled, not Redis: the timeout is re-armed once. */
const PROCESS_STALL_MS = 100;
/** A first attempt whose process never reported it finished counts as finished after this. */
const STALE_ATTEMPT_MS = 30_000;
/** Processes woken together would ask at the same millisecond; at most this much is added. */
const MAX_JITTER_MS = 20;
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
  readonly #runner: ScriptRunner;
  readonly #args: { capacity: string; perMs: string };
  readonly #prefix: string;
  readonly #fallback: TokenBucket | undefined;
  readonly #fallbackRate: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #commandTimeoutMs: number;
  readonly #probeIntervalMs: number;
  #keyId: string | undefined;
  #logger: Partial<Logger> | undefined;
  /** Local callers ask Redis one at a time: waking them all for each token would only add round trips. */
  #turn: Promise<void> = Promise.resolve();
  /** Holds this process's callers at once after a 429, before Redis has stored the pause. */
  #pausedUntil = 0;
  #onFallback = false;
  #lastProbe = 0;
  /** On the fallback, one caller is asking Redis whether it answers again: the others do not wait for it. */
  #probing = false;
  /** On the fallback, the client was seen not connected: once it is again, Redis is asked at once. */
  #sawDisconnected = false;

  constructor(options: RedisRateLimiterOptions, seams: RedisRateLimiterSeams) {
    if (typeof options !== 'object' || options === null) throw new ConfigurationError('redisRateLimiter needs { redis, requestsPerMinute, burst }');
    const requestsPerMinute = positive('requestsPerMinute', options.requestsPerMinute);
    const burst = positive('burst', options.burst);
    if (burst < 1) throw new ConfigurationError('redisRateLimiter: burst must be ≥ 1');
    this.#runner = scriptRunnerFor(options.redis);
    this.#args = { capacity: String(burst), perMs: String(requestsPerMinute / 60_000) };
    if (options.prefix !== undefined && (typeof options.prefix !== 'string' || options.prefix === '')) throw new ConfigurationError('redisRateLimiter: prefix must be a non-empty string');
    this.#prefix = options.prefix ?? 'integration-sdk:rate';
    this.#clock = seams.clock ?? systemClock;
    this.#random = seams.random ?? Math.random;
    this.#commandTimeoutMs = seams.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.#probeIntervalMs = seams.probeIntervalMs ?? 1000;
    if (options.fallback === false) {
      this.#fallbackRate = 0;
      return;
    }
    const fallback = options.fallback ?? {};
    this.#fallbackRate = positive('fallback.requestsPerMinute', fallback.requestsPerMinute ?? requestsPerMinute / 4);
    const fallbackBurst = positive('fallback.burst', fallback.burst ?? Math.max(1, Math.floor(burst / 4)));
    this.#fallback = new TokenBucket({ requestsPerMinute: this.#fallbackRate, burst: fallbackBurst }, this.#clock);
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
    const probing = this.#onFallback && this.#probeDue();
    if (this.#onFallback && !probing) return this.#fallbackAcquire(signal, budget);
    if (probing) this.#probing = true;
    const previous = this.#turn;
    let release!: () => void;
    this.#turn = new Promise((resolve) => (release = resolve));
    try {
      await (signal ? raceAbort(previous, signal) : previous);
      return await this.#acquireInTurn(signal, budget, probing);
    } finally {
      if (probing) this.#probing = false;
      // An aborted caller leaves the line at once, but the next one still waits for the one before.
      void previous.then(release);
    }
  }

  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + ms);
    this.#fallback?.pause(ms);
    if (this.#onFallback) return;
    this.#ask('pause', String(Math.ceil(ms))).catch((error: unknown) => this.#useFallback(error));
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
      if (this.#onFallback && !probing) return this.#fallbackAcquire(signal, budget);
      let answer: BucketAnswer;
      try {
        answer = await this.#ask('take', '0', signal, budget);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        this.#useFallback(error);
        // The probe interval counts from the end of a failed probe: a frozen Redis takes the whole timeout to fail.
        this.#lastProbe = this.#clock.now();
        return this.#fallbackAcquire(signal, budget);
      }
      this.#useRedis();
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

  /**
   * Whether an acquire on the fallback asks Redis: only with the client connected, and then at once
   * if it has reconnected since (or there is no fallback bucket to serve instead), otherwise at
   * most once per probe interval (Redis answering errors on a live connection).
   */
  #probeDue(): boolean {
    if (this.#probing) return false;
    if (!this.#runner.ready()) {
      this.#sawDisconnected = true;
      return false;
    }
    const now = this.#clock.now();
    if (this.#fallback && !this.#sawDisconnected && now - this.#lastProbe < this.#probeIntervalMs) return false;
    this.#sawDisconnected = false;
    this.#lastProbe = now;
    return true;
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

  /**
   * One script call, within the command timeout and what the caller has left of its deadline; the
   * time it takes is charged to the caller (a slow Redis is not pacing).
   */
  async #ask(op: BucketOp, argument: string, signal?: AbortSignal, budget?: AcquireBudget): Promise<BucketAnswer> {
    const startedAt = this.#clock.now();
    const timeoutMs = Math.max(1, Math.floor(Math.min(this.#commandTimeoutMs, budget?.remaining() ?? Infinity)));
    let cancel = () => {};
    const timeout = new Promise<never>((_, reject) => {
      let extended = false;
      const arm = (ms: number) => {
        const dueAt = this.#clock.now() + ms;
        // Decided after the event loop's next I/O poll: an answer already received while the process
        // was busy wins over a timer that fired in the same turn.
        cancel = this.#clock.setTimeout(() => setImmediate(() => {
          const now = this.#clock.now();
          // A timer this late means this process was not running (a busy event loop, a starved CPU,
          // a start-up loading modules): its command may not even have been written. Once, if the
          // caller's deadline allows, Redis gets its time again rather than being called slow.
          if (!extended && now - dueAt > PROCESS_STALL_MS && (budget === undefined || budget.remaining() - (now - startedAt) > timeoutMs)) {
            extended = true;
            arm(timeoutMs);
            return;
          }
          reject(new RateLimiterUnavailableError(`Redis did not answer within ${timeoutMs} ms`));
        }), ms);
      };
      arm(timeoutMs);
    });
    const within = <T>(promise: Promise<T>): Promise<T> => {
      const raced = Promise.race([promise, timeout]);
      return signal ? raceAbort(raced, signal) : raced;
    };
    try {
      const connecting = this.#runner.connecting();
      if (connecting) await within(connecting);
      if (!this.#runner.ready()) throw new RateLimiterUnavailableError('Redis is not connected');
      const key = `${this.#prefix}:{${this.#keyId ?? UNNAMED_KEY}}`;
      const reply = this.#runner.run(key, [op, this.#args.capacity, this.#args.perMs, argument, String(STALE_ATTEMPT_MS)]);
      reply.catch(() => {}); // settles after a timeout or an abort too: never an unhandled rejection
      return answerOf(await within(reply));
    } finally {
      cancel();
      budget?.spend(this.#clock.now() - startedAt);
    }
  }

  #useFallback(error: unknown): void {
    if (this.#onFallback) return;
    this.#onFallback = true;
    this.#lastProbe = this.#clock.now();
    this.#sawDisconnected = !this.#runner.ready();
    const reason = error instanceof Error ? error.name : typeof error;
    const using = this.#fallback ? `an in-process bucket at ${this.#fallbackRate} requests/min` : 'nothing (fallback: false): calls fail';
    this.#logger?.warn?.(`integration-sdk: the shared rate limiter cannot reach Redis; using ${using} until it answers again`, { keyId: this.#keyId, reason });
  }

  #useRedis(): void {
    if (!this.#onFallback) return;
    this.#onFallback = false;
    this.#logger?.info?.('integration-sdk: the shared rate limiter reaches Redis again', { keyId: this.#keyId });
  }
}
