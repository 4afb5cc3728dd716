/**
 * The in-process stand-in of the tenants' egress budget, until the fair budget of `./budget/` is
 * merged: each tenant's key bucket, then one egress bucket for all, both `TokenBucket`s (first come
 * first served, not fair). It does not share anything through Redis and says so.
 */
import { systemClock } from '../clock.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { TokenBucket, type AttemptFinished, type RateLimiter } from '../transport/rate-limiter.ts';
import type { TenantBudget, TenantBudgetOptions } from './budget-seam.ts';

const MINUTE = 60_000;
const MINUTES_KEPT = 15;

export function createTenantBudget(options: TenantBudgetOptions): TenantBudget {
  if (options.redis !== undefined) throw new ConfigurationError('createTenants: the egress budget shared through redis is not part of this build; leave redis out');
  const clock = options.clock ?? systemClock;
  const key = { requestsPerMinute: options.keyBudget?.requestsPerMinute ?? 120, burst: options.keyBudget?.burst ?? 120 };
  const egress = new TokenBucket({ requestsPerMinute: options.egress?.requestsPerMinute ?? 300, burst: options.egress?.burst ?? 300 }, clock);
  const buckets = new Map<string, TokenBucket>();
  const perMinute = new Map<number, number>();

  const count = () => {
    const minute = Math.floor(clock.now() / MINUTE) * MINUTE;
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
    for (const kept of perMinute.keys()) if (kept < minute - MINUTES_KEPT * MINUTE) perMinute.delete(kept);
  };

  return {
    limiterFor(tenantId) {
      const limiter: RateLimiter = {
        async acquire(signal, budget) {
          let bucket = buckets.get(tenantId);
          if (!bucket) buckets.set(tenantId, (bucket = new TokenBucket(key, clock)));
          const keyFinished = await bucket.acquire(signal, budget);
          let egressFinished: AttemptFinished | undefined;
          try {
            egressFinished = await egress.acquire(signal, budget);
          } catch (error) {
            keyFinished?.();
            throw error;
          }
          count();
          return () => {
            keyFinished?.();
            egressFinished?.();
          };
        },
        pause(ms) {
          buckets.get(tenantId)?.pause(ms);
        },
      };
      return limiter;
    },
    release(tenantId) {
      buckets.delete(tenantId);
    },
    async usage() {
      return [...perMinute].sort(([a], [b]) => a - b).map(([minute, requests]) => ({ minuteStartedAt: new Date(minute).toISOString(), requests }));
    },
    async close() {
      buckets.clear();
    },
  };
}
