import { sleep, systemClock, type Clock } from './clock.ts';

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
  /** Resolves when one request may be sent; rejects with `signal.reason` if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The service answered 429: let no request through for `ms`. */
  pause(ms: number): void;
}

/** The default limiter's settings, matching the service's per-key bucket (spec part 8). */
export interface TokenBucketOptions {
  /** @default 120 */
  requestsPerMinute: number;
  /** Requests that may go at once after a quiet period. @default 120 */
  burst: number;
}

/**
 * The service refills its bucket at exactly `requestsPerMinute`. Requests reach it after a variable
 * network delay, so two requests we spaced by exactly one refill interval can arrive closer than
 * that and find the bucket empty. Refilling 1% slower leaves the service a small surplus that grows
 * with every request and absorbs that jitter, for a 1% loss of throughput (the budget is ≥ 97%).
 */
const REFILL_SAFETY_FACTOR = 0.99;

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * The default limiter: a token bucket (capacity `burst`, refilled continuously), shared by every
 * call of a client, serving waiters first come first served.
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
  #pausedUntil = 0;
  readonly #queue: Waiter[] = [];
  #cancelTimer: (() => void) | undefined;

  constructor(options: TokenBucketOptions, clock: Clock = systemClock) {
    this.#capacity = options.burst;
    this.#tokensPerMs = (options.requestsPerMinute / 60_000) * REFILL_SAFETY_FACTOR;
    this.#clock = clock;
    this.#tokens = options.burst;
    this.#refilledAt = clock.now();
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    if (this.#queue.length === 0 && !this.#isPaused() && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
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
    this.#schedule();
  }

  #isPaused(): boolean {
    return this.#clock.now() < this.#pausedUntil;
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#refilledAt);
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
      this.#tokens -= 1;
      waiter.resolve();
    }
    this.#schedule();
  }

  #schedule(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    if (this.#queue.length === 0) return;
    const now = this.#clock.now();
    const untilPauseEnds = Math.max(0, this.#pausedUntil - now);
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
