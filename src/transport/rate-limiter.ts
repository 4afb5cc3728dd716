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
   * It may resolve to a function: the client calls it once that request's attempt has finished
   * (answered or failed), so that a bucket mirroring the service's can start refilling when the
   * service's does (see `TokenBucket`).
   */
  acquire(signal?: AbortSignal): Promise<void | AttemptFinished>;
  /** The service answered 429: let no request through for `ms`. */
  pause(ms: number): void;
  /**
   * Called once by each client constructed with this limiter, before its first request: the key's
   * id (never its secret), so that a limiter shared between processes can name the key's bucket,
   * and the client's logger for its warnings. A limiter that serves one key only may throw a
   * `ConfigurationError` when given a second one.
   */
  attach?(client: RateLimiterClient): void;
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
  onAbort: () => void;
}

/**
 * The default limiter: a token bucket of capacity `burst`, refilled continuously at exactly
 * `requestsPerMinute`, shared by every call of a client, serving waiters first come first served.
 *
 * Why it never meets a 429 from a service enforcing the same bucket: a full bucket starts
 * refilling when a token is taken. The service takes it when the request ARRIVES; counting from
 * when we SEND it would put us ahead of the service by that request's delay, and when the first
 * request of a burst is slower than later ones (a cold connection, the fetch engine loading) the
 * later ones arrive before the service has refilled what we counted: the end of the first burst
 * met a 429 in every benchmark run. So when a token leaves a full bucket, refilling waits until
 * that request's attempt has finished (its answer came back after it arrived), and starts then.
 * From then on our timeline runs behind the service's by that request's way back, so every later
 * request, however fast, arrives after the service has the token: no margin to tune, no burst
 * held back, and the nominal rate exactly. After a 429 both buckets are empty and ours restarts
 * at the answer, after the service's.
 *
 * Written here rather than with p-throttle: p-throttle counts calls per fixed interval, so it
 * cannot let a burst of 120 through and then pace at 2 per second, and it has no pause for a 429
 * (turning it off lets everything through instead).
 */
export class TokenBucket implements RateLimiter {
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

  acquire(signal?: AbortSignal): Promise<AttemptFinished | undefined> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    if (this.#queue.length === 0 && !this.#isPaused() && this.#tokens >= 1) {
      return Promise.resolve(this.#take());
    }
    return new Promise<AttemptFinished | undefined>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
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
    this.#pausedUntil = Math.max(this.#pausedUntil, now + ms);
    // The service's bucket is empty now; refill from zero with it, so that the end of the pause
    // does not release a burst the service has no tokens for.
    this.#tokens = 0;
    this.#refilledAt = now;
    this.#awaitingFirstAttempt = false;
    this.#schedule();
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
  readonly #clock: Clock;
  #pausedUntil = 0;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    for (let wait = this.#pausedUntil - this.#clock.now(); wait > 0; wait = this.#pausedUntil - this.#clock.now()) {
      await sleep(this.#clock, wait, signal);
    }
  }

  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + ms);
  }
}
