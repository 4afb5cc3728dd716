// One process of several sharing a key's budget through `redisRateLimiter`: a long bulk run of
// 1-item batches against the sandbox. The fetch handed to the client records when each request left
// (wall clock, comparable between processes) and what the sandbox answered; the client retries 429s
// silently, so they are counted here, on the wire. Used by test/redis and bench/figures/shared-rate.
// argv[2]: JSON of `SharedRateRun`. Prints one JSON line (`SharedRateOutput`).
import { IntegrationClient } from 'integration-sdk';
import { redisRateLimiter } from 'integration-sdk/redis';
import { products } from '../lib/products.ts';

export interface SharedRateRun {
  redisUrl: string;
  library: 'redis' | 'ioredis';
  sandboxUrl: string;
  apiKey: string;
  storeId: string;
  items: number;
  requestsPerMinute: number;
  burst: number;
  /** The n-th request (0-based) of this process is answered 429 here, as the service would. */
  force429At?: number;
  retryAfterS?: number;
  /** Items get this prefix so that processes do not write the same products. */
  prefix: string;
}

export interface SharedRateOutput {
  sent: { at: number; status: number }[];
  warnings: string[];
  infos: string[];
  /** Script calls sent to Redis (counted by wrapping the client's eval methods). */
  redisCalls: number;
  created: number;
}

const run = JSON.parse(process.argv[2] ?? '{}') as SharedRateRun;
let redisCalls = 0;
const counted = <T extends object>(client: T, methods: string[]): T => {
  for (const method of methods) {
    const original = (client as Record<string, unknown>)[method] as (...args: unknown[]) => unknown;
    (client as Record<string, unknown>)[method] = (...args: unknown[]) => {
      redisCalls += 1;
      return original.apply(client, args);
    };
  }
  return client;
};

async function connect() {
  if (run.library === 'ioredis') {
    const { Redis } = await import('ioredis');
    const client = new Redis(run.redisUrl, { maxRetriesPerRequest: 1 });
    client.on('error', () => {}); // the limiter falls back; ioredis would only log this
    await new Promise((resolve) => client.once('ready', resolve));
    return { limiterClient: counted(client, ['evalsha', 'eval']), close: () => client.disconnect() };
  }
  const { createClient } = await import('redis');
  // node-redis emits 'error' while it reconnects: without a listener the process would crash.
  const client = await createClient({ url: run.redisUrl }).on('error', () => {}).connect();
  return { limiterClient: counted(client, ['evalSha', 'eval']), close: () => client.destroy() };
}

const { limiterClient, close } = await connect();
const warnings: string[] = [];
const infos: string[] = [];
const logger = { debug() {}, info: (message: string) => infos.push(message), warn: (message: string) => warnings.push(message), error() {} };

const sent: { at: number; status: number }[] = [];
const observed: typeof fetch = async (input, init) => {
  const record = { at: Date.now(), status: 0 };
  const index = sent.push(record) - 1;
  if (index === run.force429At) {
    record.status = 429;
    const body = { error: { code: 'RATE_LIMITED', message: 'Forced by the test.' } };
    return new Response(JSON.stringify(body), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': String(run.retryAfterS ?? 2) } });
  }
  const response = await fetch(input, init);
  record.status = response.status;
  return response;
};

const client = new IntegrationClient({
  apiKey: run.apiKey,
  baseUrl: run.sandboxUrl,
  fetch: observed,
  logger,
  maxRetries: 10,
  rateLimit: redisRateLimiter({ redis: limiterClient as never, requestsPerMinute: run.requestsPerMinute, burst: run.burst }),
});
const items = products(run.items, run.storeId).map((item) => ({ ...item, external_id: `${run.prefix}-${item.external_id}` }));
const result = await client.catalog.upsertProducts(items, { batchSize: 1, concurrency: 4 });
await close();
const output: SharedRateOutput = { sent, warnings, infos, redisCalls, created: result.summary.created };
console.log(JSON.stringify(output));
