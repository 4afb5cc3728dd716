import type { Clock } from '../../clock.ts';
import type { AttemptFinished } from '../../transport/rate-limiter.ts';

/**
 * One token bucket's state, without a queue of its own: the fair scheduler decides who is served,
 * and takes from a key's bucket and the egress bucket together. The rules are `TokenBucket`'s (and
 * the Redis script's): a continuous refill; a token that leaves a full bucket starts the refill only
 * once its attempt has finished; a 429 pause empties the bucket, which refills from the pause's end.
 */
export class LocalBucket {
  readonly capacity: number;
  readonly #perMs: number;
  readonly #clock: Clock;
  #tokens: number;
  #at: number;
  #pausedUntil = 0;
  /** The attempt of a token taken from the full bucket, while it has not finished: no refill yet. */
  #firstAttempt: object | undefined;

  constructor(capacity: number, requestsPerMinute: number, clock: Clock) {
    this.capacity = capacity;
    this.#perMs = requestsPerMinute / 60_000;
    this.#clock = clock;
    this.#tokens = capacity;
    this.#at = clock.now();
  }

  /** Tokens now, refilled up to this moment. */
  tokens(): number {
    const now = this.#clock.now();
    if (this.#firstAttempt === undefined && now > this.#at) {
      this.#tokens = Math.min(this.capacity, this.#tokens + (now - this.#at) * this.#perMs);
      this.#at = now;
    }
    return this.#tokens;
  }

  /** Milliseconds left of a 429 pause; 0 when there is none. */
  pausedFor(): number {
    return Math.max(0, this.#pausedUntil - this.#clock.now());
  }

  /** Milliseconds until the bucket holds `need` tokens; 0 if it does; `Infinity` while the refill waits for a first attempt. */
  waitFor(need: number): number {
    const tokens = this.tokens();
    if (tokens >= need) return 0;
    if (this.#firstAttempt !== undefined) return Number.POSITIVE_INFINITY;
    return Math.ceil((need - tokens) / this.#perMs);
  }

  /** Takes one token (the caller checked `waitFor(1)`); from a full bucket, with the callback that starts the refill. */
  take(): AttemptFinished | undefined {
    const wasFull = this.tokens() >= this.capacity;
    this.#tokens -= 1;
    if (!wasFull) return undefined;
    const attempt = {};
    this.#firstAttempt = attempt;
    return () => {
      // A pause since, or a later attempt, owns the refill now.
      if (this.#firstAttempt !== attempt) return;
      this.#firstAttempt = undefined;
      this.#at = Math.max(this.#at, this.#clock.now());
    };
  }

  /** The service's bucket is empty: hold everything for `ms`, then refill from zero. */
  pause(ms: number): void {
    const now = this.#clock.now();
    this.#pausedUntil = Math.max(this.#pausedUntil, now + ms);
    this.#tokens = 0;
    this.#at = this.#pausedUntil;
    this.#firstAttempt = undefined;
  }

  /** Full and not paused: dropping it and making it again later changes nothing. */
  isAtRest(): boolean {
    return this.pausedFor() === 0 && this.#firstAttempt === undefined && this.tokens() >= this.capacity;
  }
}
