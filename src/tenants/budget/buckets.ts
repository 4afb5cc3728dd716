import type { AcquireBudget, AttemptFinished } from '../../transport/rate-limiter.ts';
import type { RequestKind } from './request-kind.ts';
import type { MinuteUsage } from './usage-counter.ts';

/**
 * A take's answer: go (both tokens taken), or what each bucket lacks in ms (0 for one that is not
 * the reason), as pacing or, when `paused`, as what is left of a 429 pause. `turnMs`: what a bulk
 * take lacks of its tenant's turn among the bulk tenants of every process (on Redis; 0 in process,
 * where the scheduler's own turns are the only ones).
 */
export type TakeAnswer =
  | { go: true; finished: AttemptFinished | undefined }
  | { go: false; paused: boolean; keyMs: number; egressMs: number; turnMs: number };

/**
 * Where the buckets live: in this process, or in Redis (shared by every process behind the egress).
 * A key is named by its `key_id` (the bucket `redisRateLimiter` uses for it).
 */
export interface Buckets {
  /** One token from the key's bucket and one from the egress bucket, both or neither. */
  take(key: string, kind: RequestKind, budget: AcquireBudget | undefined): TakeAnswer | Promise<TakeAnswer>;
  /** A 429 on `key`: pauses the egress when the key still had a token (the IP is out), the key otherwise; says which. */
  limited(key: string, ms: number): 'key' | 'egress' | Promise<'key' | 'egress'>;
  /** The IP is out (every key in use paused): the egress bucket is paused for `ms`. */
  pauseEgress(ms: number): void;
  /** The key's bucket is no longer needed by any tenant here. */
  forget(key: string): void;
  usage(): Promise<MinuteUsage[]>;
  /** Redis is due to be asked again (the fallback is serving): what the fallback answered is no guide. */
  probeDue?(): boolean;
}

/** The egress's rate and burst as the buckets take them. */
export interface Rates {
  key: { requestsPerMinute: number; burst: number };
  egress: { requestsPerMinute: number; burst: number };
}

/**
 * Egress tokens a bulk take leaves for interactive calls: one second of the egress rate (5 at
 * 300/min), fewer when the burst is smaller. The budget still runs at its full rate: bulk takes
 * every token above the reserve, and the reserve is refilled first. Across processes this is what
 * lets an interactive call of one process go at once while another process's batches wait.
 */
export function interactiveReserve(egress: Rates['egress']): number {
  return Math.max(0, Math.min(Math.floor(egress.burst) - 1, Math.ceil(egress.requestsPerMinute / 60)));
}

/** Tokens the egress must hold for a take of `kind`. */
export function egressNeed(kind: RequestKind, reserve: number): number {
  return kind === 'bulk' ? 1 + reserve : 1;
}

/** Both buckets' callbacks as one: each starts its bucket's refill (those taken from a full bucket). */
export function bothFinished(first: AttemptFinished | undefined, second: AttemptFinished | undefined, then: () => void): AttemptFinished | undefined {
  if (first === undefined && second === undefined) return undefined;
  let called = false;
  return () => {
    if (called) return;
    called = true;
    first?.();
    second?.();
    then();
  };
}
