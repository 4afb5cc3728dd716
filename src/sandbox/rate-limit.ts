import type { Clock } from '../clock.ts';
import { SandboxError } from './http/sandbox-error.ts';

/** A token bucket: `capacity` requests at once, then `refillPerSecond` (wire assumption). */
export interface BucketConfig {
  capacity: number;
  refillPerSecond: number;
}

/**
 * Rate limits; `false` (as a whole or per bucket) turns a limit off.
 * @default { perKey: { capacity: 120, refillPerSecond: 2 }, perIp: { capacity: 300, refillPerSecond: 5 } }
 */
export type RateOptions = false | { perKey?: BucketConfig | false; perIp?: BucketConfig | false };

export const DEFAULT_PER_KEY: BucketConfig = { capacity: 120, refillPerSecond: 2 };
export const DEFAULT_PER_IP: BucketConfig = { capacity: 300, refillPerSecond: 5 };

interface Bucket {
  tokens: number;
  at: number;
}

/** One family of buckets (per key, or per IP), each filled lazily from the clock. */
export class BucketSet {
  readonly #config: BucketConfig;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Bucket>();

  constructor(config: BucketConfig, clock: Clock) {
    this.#config = config;
    this.#clock = clock;
  }

  /** Takes one token for `id`, or throws 429 with `Retry-After` in whole seconds, at least 1. */
  take(id: string, what: string): void {
    const now = this.#clock.now();
    const { capacity, refillPerSecond } = this.#config;
    const bucket = this.#buckets.get(id) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * refillPerSecond);
    bucket.at = now;
    this.#buckets.set(id, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    const seconds = refillPerSecond > 0 ? Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerSecond)) : 60;
    throw new SandboxError('RATE_LIMITED', `Rate limit of the ${what} exceeded (${capacity} requests, then ${refillPerSecond}/s). Retry after ${seconds} s.`, {
      headers: { 'retry-after': String(seconds) },
    });
  }
}

export function bucketsFrom(options: RateOptions | undefined, clock: Clock): { perKey: BucketSet | null; perIp: BucketSet | null } {
  if (options === false) return { perKey: null, perIp: null };
  const perKey = options?.perKey === undefined ? DEFAULT_PER_KEY : options.perKey;
  const perIp = options?.perIp === undefined ? DEFAULT_PER_IP : options.perIp;
  return {
    perKey: perKey ? new BucketSet(perKey, clock) : null,
    perIp: perIp ? new BucketSet(perIp, clock) : null,
  };
}
