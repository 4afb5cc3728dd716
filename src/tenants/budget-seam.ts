/**
 * The one place the tenants module reaches its egress budget. The fair, Redis-shared budget lives in
 * `./budget/` (its own module); until it is merged, the in-process stand-in below serves, with the
 * same interface. Merging: import `createTenantBudget` and its types from `./budget/index.ts` here.
 */
import type { Clock } from '../clock.ts';
import type { RateLimiter } from '../transport/rate-limiter.ts';
import type { Logger } from '../transport/logger.ts';

export interface TenantBudgetOptions {
  keyBudget?: { requestsPerMinute?: number; burst?: number };
  egress?: { id?: string; requestsPerMinute?: number; burst?: number };
  redis?: unknown;
  clock?: Clock;
  logger?: Partial<Logger>;
}

export interface TenantBudget {
  /** The RateLimiter a tenant's IntegrationClient is built with (key bucket + egress bucket). */
  limiterFor(tenantId: string): RateLimiter;
  /** Drops what the budget holds for a tenant (disconnect, key change, client dropped). */
  release(tenantId: string): void;
  /** Egress use per minute over the last minutes, for `doctor --tenants`. */
  usage(): Promise<{ minuteStartedAt: string; requests: number }[]>;
  close(): Promise<void>;
}

export { createTenantBudget } from './stand-in-budget.ts';
