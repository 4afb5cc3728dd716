// One process of the tenants-budget figure: some of the 50 tenants, each with its own client on one
// egress budget — the pusher sending 100k SKUs in batches, the till tenants each reading an order
// and crediting loyalty points every 30 s — through the fair budget (`fair`) or through what the
// SDK's parts give without it (`fcfs`: a bucket per key, then one egress bucket, first come first
// served). It records how long each till call waited for its token and every request on the wire.
// Imports the sources, not dist/: the budget has no package entry of its own (integration-sdk/tenants
// builds on it), and one copy of the classes must serve client and limiter alike.
// argv[2]: JSON of `TenantsBudgetRun`. Prints one JSON line (`TenantsBudgetOutput`).
import { IntegrationClient } from '../../src/index.ts';
import { redisRateLimiter } from '../../src/redis/index.ts';
import { createTenantBudget } from '../../src/tenants/budget/index.ts';
import { TokenBucket, type AcquireBudget, type AttemptFinished, type LimitedRequest, type RateLimiter, type RateLimiterClient } from '../../src/transport/rate-limiter.ts';
import { products } from '../lib/products.ts';
import { recordingFetch, type SentRequest } from '../lib/recording-fetch.ts';

export interface TenantsBudgetRun {
  mode: 'fair' | 'fcfs';
  sandboxUrl: string;
  /** The pusher's key, and the key the till tenants share (the seeded merchant has few keys). */
  keys: { pusher: string; tills: string };
  storeId: string;
  orderId: string;
  customerExternalId: string;
  /** Whether the pusher runs in this process, and which of the till tenants (0 … tillCount - 1). */
  pusher: boolean;
  tills: number[];
  tillCount: number;
  everyMs: number;
  keyBudget: { requestsPerMinute: number; burst: number };
  egress: { id: string; requestsPerMinute: number; burst: number };
  redisUrl?: string;
  skus: number;
  batchSize: number;
  concurrency: number;
  /** Wall-clock ms at which every process starts, and how long the run lasts. */
  startAt: number;
  durationMs: number;
}

export interface TenantsBudgetOutput {
  /** Ms each till call's attempt waited for its token. */
  waits: number[];
  sent: SentRequest[];
  tillCalls: number;
  tillErrors: string[];
  batches: number;
}

const run = JSON.parse(process.argv[2] ?? '{}') as TenantsBudgetRun;
const redis = run.redisUrl === undefined ? undefined : await (await import('redis')).createClient({ url: run.redisUrl }).on('error', () => {}).connect();

/** The baseline: a key's bucket, then the egress's, each first come first served; a 429 pauses the key. */
class KeyThenEgress implements RateLimiter {
  readonly #key: RateLimiter;
  readonly #egress: RateLimiter;

  constructor(key: RateLimiter, egress: RateLimiter) {
    this.#key = key;
    this.#egress = egress;
  }

  async acquire(signal?: AbortSignal, budget?: AcquireBudget): Promise<AttemptFinished | undefined> {
    const key = await this.#key.acquire(signal, budget);
    const egress = await this.#egress.acquire(signal, budget);
    if (!key && !egress) return undefined;
    return () => {
      key?.();
      egress?.();
    };
  }

  pause(ms: number): void {
    this.#key.pause(ms);
  }

  attach(client: RateLimiterClient): void {
    this.#key.attach?.(client);
  }
}

function baselineLimiters(): (tenant: string, apiKey: string) => RateLimiter {
  const keyIdOf = (apiKey: string) => apiKey.split('_')[1]!;
  const keys = new Map<string, RateLimiter>();
  const egress: RateLimiter = redis
    ? redisRateLimiter({ redis, ...run.egress, prefix: `egress-${run.egress.id}` })
    : new TokenBucket(run.egress);
  egress.attach?.({ keyId: 'ip', logger: undefined });
  return (_tenant, apiKey) => {
    const keyId = keyIdOf(apiKey);
    let key = keys.get(keyId);
    if (key === undefined) {
      key = redis ? redisRateLimiter({ redis, ...run.keyBudget }) : new TokenBucket(run.keyBudget);
      keys.set(keyId, key);
    }
    return new KeyThenEgress(key, egress);
  };
}

const budget = run.mode === 'fair' ? createTenantBudget({ redis, keyBudget: run.keyBudget, egress: run.egress }) : undefined;
const limiterFor = budget ? (tenant: string) => budget.limiterFor(tenant) : baselineLimiters();

const waits: number[] = [];
/** Times each acquire of a till tenant: the wait its call spent for a token. */
function timed(limiter: RateLimiter): RateLimiter {
  return {
    async acquire(signal?: AbortSignal, acquireBudget?: AcquireBudget, request?: LimitedRequest) {
      const startedAt = performance.now();
      const finished = await limiter.acquire(signal, acquireBudget, request);
      waits.push(performance.now() - startedAt);
      return finished;
    },
    pause: (ms) => limiter.pause(ms),
    attach: (client) => limiter.attach?.(client),
  };
}

const { fetch: recording, sent } = recordingFetch();
const clientFor = (tenant: string, apiKey: string, limiter: RateLimiter) =>
  new IntegrationClient({ apiKey, baseUrl: run.sandboxUrl, fetch: recording, maxRetries: 10, rateLimit: limiter });

const endAt = run.startAt + run.durationMs;
await new Promise((resolve) => setTimeout(resolve, Math.max(0, run.startAt - Date.now())));

let batches = 0;
const push = async () => {
  if (!run.pusher) return;
  const client = clientFor('pusher', run.keys.pusher, limiterFor('pusher', run.keys.pusher));
  const stop = AbortSignal.timeout(Math.max(1, endAt - Date.now()));
  await client.catalog
    .upsertProducts(products(run.skus, run.storeId), { batchSize: run.batchSize, concurrency: run.concurrency, signal: stop, onProgress: () => void (batches += 1) })
    .catch((error: unknown) => {
      if (!stop.aborted) throw error;
    });
};

let tillCalls = 0;
const tillErrors: string[] = [];
const till = async (index: number) => {
  const tenant = `till-${index}`;
  const client = clientFor(tenant, run.keys.tills, timed(limiterFor(tenant, run.keys.tills)));
  // The tills' ticks are spread over the period, as customers at 49 stores would be.
  for (let at = run.startAt + (index * run.everyMs) / run.tillCount; at < endAt; at += run.everyMs) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
    try {
      await client.orders.get(run.orderId);
      await client.loyalty.credit({ external_id: run.customerExternalId, points: 1, description: 'bench' });
      tillCalls += 2;
    } catch (error) {
      tillErrors.push(error instanceof Error ? error.name : String(error));
    }
  }
};

await Promise.all([push(), ...run.tills.map(till)]);
await budget?.close();
redis?.destroy();
const output: TenantsBudgetOutput = { waits, sent, tillCalls, tillErrors, batches };
console.log(JSON.stringify(output));
