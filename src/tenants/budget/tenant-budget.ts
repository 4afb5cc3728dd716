import { systemClock, type Clock } from '../../clock.ts';
import { ConfigurationError, RateLimiterUnavailableError } from '../../errors/index.ts';
import { scriptRunnerFor } from '../../redis/redis-client.ts';
import type { Logger } from '../../transport/logger.ts';
import type { AcquireBudget, AttemptFinished, LimitedRequest, RateLimiter, RateLimiterClient } from '../../transport/rate-limiter.ts';
import type { Rates } from './buckets.ts';
import { FairScheduler, type TenantLine } from './fair-scheduler.ts';
import { LocalBuckets } from './local-buckets.ts';
import { RedisBuckets } from './redis-buckets.ts';
import { kindOf } from './request-kind.ts';
import type { MinuteUsage } from './usage-counter.ts';

/** Options of {@link createTenantBudget}. */
export interface TenantBudgetOptions {
  /** Each merchant's key, as the service limits it (spec 8). @default { requestsPerMinute: 120, burst: 120 } */
  keyBudget?: { requestsPerMinute?: number; burst?: number };
  /** The egress IP's budget that every tenant (and, with `redis`, every process behind it) shares. @default { id: 'default', requestsPerMinute: 300, burst: 300 } */
  egress?: { id?: string; requestsPerMinute?: number; burst?: number };
  /** A connected node-redis (>= 5) or ioredis client, as `integration-sdk/redis` takes it: the buckets are then shared through Redis. */
  redis?: unknown;
  clock?: Clock;
  /** Where the one warning goes when Redis does not answer (else the first client's logger). */
  logger?: Partial<Logger>;
}

/** What {@link createTenantBudget} returns. */
export interface TenantBudget {
  /** The RateLimiter a tenant's IntegrationClient is built with (key bucket + egress bucket, fair). */
  limiterFor(tenantId: string): RateLimiter;
  /** Drops what the budget holds for a tenant (disconnect, key change, LRU eviction). */
  release(tenantId: string): void;
  /** Egress use per minute over the last minutes, for `doctor --tenants`. */
  usage(): Promise<MinuteUsage[]>;
  close(): Promise<void>;
}

/** Randomness and patience for tests; time comes through `options.clock`. */
export interface TenantBudgetSeams {
  /** Uniform in [0, 1): the jitter added to a wait Redis answered. @default Math.random */
  random?: () => number;
  /** A Redis call not answered by then counts as Redis unavailable. @default 500 */
  commandTimeoutMs?: number;
  /** On the fallback, Redis is asked again at most this often. @default 1000 */
  probeIntervalMs?: number;
}

function rate(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0)) throw new ConfigurationError(`createTenantBudget: ${name} must be a finite number > 0`);
  return value;
}

function ratesFrom(options: TenantBudgetOptions): Rates {
  const key = { requestsPerMinute: rate('keyBudget.requestsPerMinute', options.keyBudget?.requestsPerMinute, 120), burst: rate('keyBudget.burst', options.keyBudget?.burst, 120) };
  const egress = { requestsPerMinute: rate('egress.requestsPerMinute', options.egress?.requestsPerMinute, 300), burst: rate('egress.burst', options.egress?.burst, 300) };
  if (key.burst < 1) throw new ConfigurationError('createTenantBudget: keyBudget.burst must be ≥ 1');
  if (egress.burst < 1) throw new ConfigurationError('createTenantBudget: egress.burst must be ≥ 1');
  return { key, egress };
}

/**
 * The shared budget of many merchants' clients: every request takes a token from its key's bucket
 * and from the egress bucket, both or neither; waiting tenants are served in turn, interactive
 * calls before bulk batches (see `docs/architecture.md`, "The tenants' egress budget"). With `redis`,
 * both buckets are shared by every process behind the same `egress.id`. `createTenants` makes one
 * from its own `redis`, `keyBudget` and `egress` options and builds each tenant's client with it.
 *
 * @example
 * ```ts
 * import { IntegrationClient } from 'integration-sdk';
 * import { createTenantBudget } from '../tenants/budget/index.ts'; // inside the package: createTenants' own
 *
 * const budget = createTenantBudget({ egress: { id: 'nat-a' }, redis });
 * const client = new IntegrationClient({ apiKey, baseUrl, rateLimit: budget.limiterFor('loja-42') });
 * await client.orders.get(orderId);   // goes ahead of any tenant's catalog batches
 * budget.release('loja-42');          // the tenant disconnected
 * await budget.close();
 * ```
 */
export function createTenantBudget(options: TenantBudgetOptions = {}, seams: TenantBudgetSeams = {}): TenantBudget {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('createTenantBudget needs an options object');
  const rates = ratesFrom(options);
  const egressId = options.egress?.id ?? 'default';
  if (typeof egressId !== 'string' || egressId === '') throw new ConfigurationError('createTenantBudget: egress.id must be a non-empty string');
  const clock = options.clock ?? systemClock;
  let logger = options.logger;
  if (isCluster(options.redis)) {
    throw new ConfigurationError("createTenantBudget: a Redis Cluster client cannot hold the budget: a key's bucket and the egress bucket are taken in one script, and on a Cluster they live in different slots; give it a client of one Redis server");
  }
  const runner = options.redis === undefined ? undefined : scriptRunnerFor(options.redis, 'createTenantBudget');
  const scheduler = new FairScheduler(clock, (refilled) =>
    runner === undefined
      ? new LocalBuckets(rates, clock, refilled)
      : new RedisBuckets(runner, rates, egressId, () => logger, { ...seams, clock, random: seams.random ?? Math.random }, refilled),
  );
  const limiters = new Map<string, TenantLimiter>();
  return {
    limiterFor(tenantId) {
      if (typeof tenantId !== 'string' || tenantId === '') throw new ConfigurationError('createTenantBudget: limiterFor needs a tenant id (a non-empty string)');
      let limiter = limiters.get(tenantId);
      if (limiter === undefined) {
        // Until a client names its key (attach), the tenant's bucket is its own: `_` is never in a key id.
        limiter = new TenantLimiter(scheduler, scheduler.open(`_tenant:${tenantId}`), (clientLogger) => (logger ??= clientLogger));
        limiters.set(tenantId, limiter);
      }
      return limiter;
    },
    release(tenantId) {
      const limiter = limiters.get(tenantId);
      if (limiter === undefined) return;
      limiters.delete(tenantId);
      scheduler.close(limiter.line);
    },
    usage: () => scheduler.buckets.usage(),
    close() {
      scheduler.shutDown(new RateLimiterUnavailableError("the tenants' budget was closed; the call was not sent"));
      limiters.clear();
      return Promise.resolve();
    },
  };
}

/** An ioredis `Cluster` (`isCluster`) or a node-redis cluster (`createCluster`: its `masters`). */
function isCluster(redis: unknown): boolean {
  if (typeof redis !== 'object' || redis === null) return false;
  return (redis as { isCluster?: unknown }).isCluster === true || 'masters' in redis;
}

/** One tenant's RateLimiter: its calls wait in the fair scheduler, by kind. */
class TenantLimiter implements RateLimiter {
  /** A 429 pause is charged to the call's budget and one past its deadline refused; pacing is not. */
  readonly honoursBudget = true;
  readonly #scheduler: FairScheduler;
  readonly line: TenantLine;
  readonly #onLogger: (logger: Partial<Logger>) => void;

  constructor(scheduler: FairScheduler, line: TenantLine, onLogger: (logger: Partial<Logger>) => void) {
    this.#scheduler = scheduler;
    this.line = line;
    this.#onLogger = onLogger;
  }

  acquire(signal?: AbortSignal, budget?: AcquireBudget, request?: LimitedRequest): Promise<AttemptFinished | undefined> {
    return this.#scheduler.acquire(this.line, kindOf(request), signal, budget);
  }

  pause(ms: number): void {
    this.#scheduler.limited(this.line, ms);
  }

  /** The client names the tenant's key: its bucket is that key's (the latest client's, after a key change). */
  attach({ keyId, logger }: RateLimiterClient): void {
    if (logger !== undefined) this.#onLogger(logger);
    this.#scheduler.rekey(this.line, keyId);
  }
}
