import { sleep, systemClock, type Clock } from '../clock.ts';
import type { Logger } from './logger.ts';

/**
 * What the client asks before every attempt, and tells after every 429. Implement it to share one
 * key's budget between several processes (e.g. over Redis).
 *
 * @example
 * ```ts
 * const shared: RateLimiter = {
 *   acquire: (signal) => redisBucket.take(1, { signal }),
 *   pause: (ms) => void redisBucket.pauseFor(ms),
 * };
 * const client = new IntegrationClient({ apiKey, baseUrl, rateLimit: shared });
 * ```
 */
export interface RateLimiter {
  /**
   * Resolves when one request may be sent; rejects with `signal.reason` if `signal` aborts first.
   * It may resolve to a function, called once that request's attempt has finished (see `TokenBucket`).
   * `budget` is what the call has left of its `totalTimeoutMs`: waiting for a token is not charged to
   * it, but waiting out a 429 pause is, and so is a round trip to a shared store (see
   * {@link AcquireBudget}). `request` names what the token is for, so that a limiter serving
   * several kinds of call (interactive before bulk) can tell them apart; limiters of one kind ignore it.
   */
  acquire(signal?: AbortSignal, budget?: AcquireBudget, request?: LimitedRequest): Promise<void | AttemptFinished>;
  /**
   * `true` when `acquire` keeps the call's deadline itself through `budget`: it charges a 429 pause
   * it makes a call wait out (`budget.spend`) and throws {@link PauseOutlastsDeadline} rather than
   * start one that ends past `budget.remaining()`. Its pacing is then free: the client neither cuts
   * nor charges the wait. Left out, the client cannot tell pacing from a pause another client met
   * through this limiter, so the whole wait counts against the call's `totalTimeoutMs`, and the
   * `signal` given to `acquire` aborts when that runs out (the call then rejects with
   * `RateLimitError`, or its last error on a retry).
   */
  readonly honoursBudget?: boolean;
  /** The service answered 429: let no request through for `ms`. */
  pause(ms: number): void;
  /**
   * Called once by each client built with this limiter: the key's id (never its secret), to name a
   * shared bucket, and the client's logger. A limiter serving one key may throw `ConfigurationError`
   * when given a second.
   */
  attach?(client: RateLimiterClient): void;
}

/** The request a token is asked for (see `RateLimiter.acquire`). */
export interface LimitedRequest {
  method: string;
  /** The route template under `/integration/v1`, e.g. `/orders/{id}`, `/products/bulk`: never an id. */
  route: string;
}

/** What a client tells the limiter it was given (see `RateLimiter.attach`). */
export interface RateLimiterClient {
  /** The `<key_id>` of `service_<key_id>_<secret>`. */
  keyId: string;
  /** The client's logger, already made never to throw; `undefined` when it has none. */
  logger: Partial<Logger> | undefined;
}

/** Called by the client when the attempt a token was taken for has finished. */
export type AttemptFinished = () => void;

/**
 * What a call has left of its `totalTimeoutMs`, as `RateLimiter.acquire` sees it. The bucket's
 * steady pacing is the price of the caller's own concurrency and is not charged; a 429 pause
 * (`Retry-After`, whoever met it) and a round trip to a shared store (Redis) are. A limiter must not
 * start waiting out a pause that would end past `remaining()`: it throws
 * {@link PauseOutlastsDeadline} instead, and the client throws `RateLimitError` without sending.
 */
export interface AcquireBudget {
  /** Milliseconds the call has left. */
  remaining(): number;
  /** Charges `ms` of the limiter's own time (a pause waited out, a round trip) to the call. */
  spend(ms: number): void;
}

/**
 * Thrown by `acquire` when the key's 429 pause ends after the call's budget: waiting could only end
 * past the deadline. The client turns it into `RateLimitError` (nothing is sent), with
 * `retryAfterMs` the pause left, or into the call's last error on a retry.
 *
 * @example
 * ```ts
 * import { PauseOutlastsDeadline, type RateLimiter } from 'integration-sdk';
 *
 * let pausedUntil = 0;
 * const limiter: RateLimiter = {
 *   honoursBudget: true,
 *   async acquire(signal, budget) {
 *     const pauseMs = pausedUntil - Date.now();
 *     if (pauseMs <= 0) return;
 *     if (budget && pauseMs >= budget.remaining()) throw new PauseOutlastsDeadline(pauseMs);
 *     budget?.spend(pauseMs);
 *     await new Promise((resolve) => setTimeout(resolve, pauseMs)); // (honour `signal` too)
 *   },
 *   pause: (ms) => void (pausedUntil = Math.max(pausedUntil, Date.now() + ms)),
 * };
 * ```
 */
export class PauseOutlastsDeadline extends Error {
  readonly pauseLeftMs: number;

  constructor(pauseLeftMs: number) {
    super(`the rate-limit pause (${Math.ceil(pauseLeftMs)} ms left) outlasts the call's totalTimeoutMs`);
    this.name = 'PauseOutlastsDeadline';
    this.pauseLeftMs = pauseLeftMs;
  }
}

/**
 * Charges a pause of `ms` to `budget`, or throws {@link PauseOutlastsDeadline} when it would end at
 * or past the deadline (the same rule as a `Retry-After` wait between attempts).
 */
export function chargePause(budget: AcquireBudget | undefined, ms: number): void {
  if (budget === undefined || ms <= 0) return;
  if (ms >= budget.remaining()) throw new PauseOutlastsDeadline(ms);
  budget.spend(ms);
}

/** The default limiter's settings, matching the service's per-key bucket (spec part 8). */
export interface TokenBucketOptions {
  /** @default 120 */
  requestsPerMinute: number;
  /** Requests that may go at once after a quiet period. @default 120 */
  burst: number;
}

interface Waiter {
  resolve: (finished: AttemptFinished | undefined) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  budget: AcquireBudget | undefined;
  onAbort: () => void;
}

/**
 * The default limiter: a token bucket of capacity `burst`, refilled continuously at exactly
 * `requestsPerMinute`, serving waiters first come first served. A token leaving a full bucket starts
 * the refill only once its attempt has finished: the service's bucket starts when the request
 * arrives, and counting from the send put the end of the first burst ahead of it (a 429 in every
 * benchmark run). Behind the service by one way back, every later request arrives after the service
 * has its token, at the nominal rate (docs/retries-and-rate-limit.md). Not p-throttle: it counts
 * calls per fixed interval, so it cannot let a burst through and then pace, and has no 429 pause.
 */
export class TokenBucket implements RateLimiter {
  readonly honoursBudget = true;
  readonly #capacity: number;
  readonly #tokensPerMs: number;
  readonly #clock: Clock;
  #tokens: number;
  #refilledAt: number;
  /** A token left the full bucket and its attempt has not finished: no refill counts yet. */
  #awaitingFirstAttempt = false;
  #pausedUntil = 0;
  readonly #queue: Waiter[] = [];
  #cancelTimer: (() => void) | undefined;

  constructor(options: TokenBucketOptions, clock: Clock = systemClock) {
    this.#capacity = options.burst;
    this.#tokensPerMs = options.requestsPerMinute / 60_000;
    this.#clock = clock;
    this.#tokens = this.#capacity;
    this.#refilledAt = clock.now();
  }

  acquire(signal?: AbortSignal, budget?: AcquireBudget): Promise<AttemptFinished | undefined> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    if (this.#queue.length === 0 && !this.#isPaused() && this.#tokens >= 1) {
      return Promise.resolve(this.#take());
    }
    try {
      // A pause, whichever client's 429 set it, counts against the call's deadline; pacing does not.
      chargePause(budget, this.#pausedUntil - this.#clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AttemptFinished | undefined>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        budget,
        onAbort: () => {
          this.#queue.splice(this.#queue.indexOf(waiter), 1);
          this.#schedule(); // no timer left behind for a queue that emptied
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#queue.push(waiter);
      this.#schedule();
    });
  }

  pause(ms: number): void {
    const now = this.#clock.now();
    const pausedFrom = Math.max(now, this.#pausedUntil);
    this.#pausedUntil = Math.max(this.#pausedUntil, now + ms);
    // Waiters already queued now wait this much longer: charged to their calls, or refused.
    this.#chargeWaiters(this.#pausedUntil - pausedFrom);
    // The service's bucket is empty now: refill from zero with it, not release a burst at the pause's end.
    this.#tokens = 0;
    this.#refilledAt = now;
    this.#awaitingFirstAttempt = false;
    this.#schedule();
  }

  /**
   * Milliseconds until `requests` more requests could have gone, from what the bucket knows now:
   * the 429 pause left, or the tokens they lack at the bucket's rate, whichever is longer. Read
   * only (it changes nothing): for an estimate such as the CLI's progress ETA.
   */
  waitFor(requests: number): number {
    const now = this.#clock.now();
    const elapsed = this.#awaitingFirstAttempt ? 0 : Math.max(0, now - this.#refilledAt);
    const tokens = Math.min(this.#capacity, this.#tokens + elapsed * this.#tokensPerMs);
    return Math.max(0, this.#pausedUntil - now, (requests - tokens) / this.#tokensPerMs);
  }

  #chargeWaiters(extraMs: number): void {
    if (extraMs <= 0) return;
    for (const waiter of [...this.#queue]) {
      try {
        chargePause(waiter.budget, extraMs);
      } catch (error) {
        this.#queue.splice(this.#queue.indexOf(waiter), 1);
        waiter.signal?.removeEventListener('abort', waiter.onAbort);
        waiter.reject(error);
      }
    }
  }

  /** Takes one token; taken from a full bucket, refilling starts when its attempt has finished. */
  #take(): AttemptFinished | undefined {
    const wasFull = this.#tokens >= this.#capacity;
    this.#tokens -= 1;
    if (!wasFull) return undefined;
    this.#awaitingFirstAttempt = true;
    let called = false;
    return () => {
      if (called) return;
      called = true;
      this.#refill();
      this.#awaitingFirstAttempt = false;
      this.#refilledAt = this.#clock.now();
      this.#schedule();
    };
  }

  #isPaused(): boolean {
    return this.#clock.now() < this.#pausedUntil;
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = this.#awaitingFirstAttempt ? 0 : Math.max(0, now - this.#refilledAt);
    this.#tokens = Math.min(this.#capacity, this.#tokens + elapsed * this.#tokensPerMs);
    this.#refilledAt = now;
  }

  /** Serves the queue head while tokens last, then sets one timer for when the next can go. */
  #drain(): void {
    this.#cancelTimer = undefined;
    this.#refill();
    while (this.#queue.length > 0 && !this.#isPaused() && this.#tokens >= 1) {
      const waiter = this.#queue.shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(this.#take());
    }
    this.#schedule();
  }

  #schedule(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    if (this.#queue.length === 0) return;
    const now = this.#clock.now();
    const untilPauseEnds = Math.max(0, this.#pausedUntil - now);
    // Refilling has not started: the attempt that starts it reschedules when it finishes.
    if (this.#awaitingFirstAttempt && this.#tokens < 1) return;
    const untilToken = this.#tokens >= 1 ? 0 : (1 - this.#tokens) / this.#tokensPerMs;
    this.#cancelTimer = this.#clock.setTimeout(() => this.#drain(), Math.ceil(Math.max(untilPauseEnds, untilToken)));
  }
}

/**
 * `rateLimit: false`: no pacing, but a 429 still holds back every call of the client until its
 * `Retry-After` has passed (otherwise each call would meet its own 429).
 */
export class PauseOnlyLimiter implements RateLimiter {
  readonly honoursBudget = true;
  readonly #clock: Clock;
  #pausedUntil = 0;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  async acquire(signal?: AbortSignal, budget?: AcquireBudget): Promise<void> {
    signal?.throwIfAborted();
    // A pause extended while waiting (another 429) is charged again for what it added.
    for (let wait = this.#pausedUntil - this.#clock.now(); wait > 0; wait = this.#pausedUntil - this.#clock.now()) {
      chargePause(budget, wait);
      await sleep(this.#clock, wait, signal);
    }
  }

  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + ms);
  }
}
