// One process of several sharing a key's budget through `redisRateLimiter`: a long bulk run of
// 1-item batches against the sandbox. The fetch handed to the client records when each request left
// (wall clock, comparable between processes) and what the sandbox answered; the client retries 429s
// silently, so they are counted here, on the wire. Used by test/redis and bench/figures/shared-rate.
// argv[2]: JSON of `SharedRateRun`. Prints one JSON line (`SharedRateOutput`), last.
import { createInterface } from 'node:readline';
import { IntegrationClient } from 'integration-sdk';
import { redisRateLimiter } from 'integration-sdk/redis';
import { product, products } from '../lib/products.ts';

export interface SharedRateRun {
  redisUrl: string;
  library: 'redis' | 'ioredis';
  sandboxUrl: string;
  apiKey: string;
  storeId: string;
  /** Items pushed; with `steered`, at most this many (a `finish` line ends the run sooner). */
  items: number;
  requestsPerMinute: number;
  burst: number;
  /** The n-th request (0-based) of this process is answered 429 here, as the service would. */
  force429At?: number;
  retryAfterS?: number;
  /** Items get this prefix so that processes do not write the same products. */
  prefix: string;
  /** The limiter's `commandTimeoutMs` seam (default 500 ms): how slow Redis may be before it counts as down. */
  commandTimeoutMs?: number;
  /**
   * Steered by its parent (the tests), so that they wait on what happens rather than on time: prints
   * a `SharedRateEvent` line for each step as it happens, sends nothing before a `go` line on stdin,
   * and hands the client no more items after a `finish` line.
   */
  steered?: boolean;
}

/** What a steered process prints as it happens, one JSON line each. */
export type SharedRateEvent =
  | { event: 'ready' }
  | { event: 'sent'; status: number; forced?: true }
  | { event: 'granted'; at: number }
  | { event: 'paused'; askedAt: number; at: number; ms: number }
  | { event: 'warn' | 'info'; message: string };

export interface SharedRateOutput {
  sent: { at: number; status: number }[];
  warnings: string[];
  infos: string[];
  /** Script calls sent to Redis (counted by wrapping the client's eval methods). */
  redisCalls: number;
  created: number;
  /** Items handed to the client. */
  offered: number;
  /**
   * Each token the Redis bucket granted: when the script call that took it left for Redis, and when
   * the grant reached this process (a grant is the answer to the last take before it: a process
   * asks Redis one caller at a time).
   */
  grants: { askedAt: number; at: number }[];
  /** Each pause stored in the Redis bucket after a 429: when the call left, when Redis acknowledged it, its length. */
  pauses: { askedAt: number; at: number; ms: number }[];
}

const run = JSON.parse(process.argv[2] ?? '{}') as SharedRateRun;
const emit = (event: SharedRateEvent) => {
  if (run.steered) console.log(JSON.stringify(event));
};
const commands = run.steered ? createInterface({ input: process.stdin }) : undefined;
const told = (word: string) => new Promise<void>((resolve) => commands!.on('line', (line) => line.trim() === word && resolve()));
const go = run.steered ? told('go') : undefined;
let finished = false;
if (run.steered) void told('finish').then(() => (finished = true));

let redisCalls = 0;
let lastTake: { askedAt: number } | undefined;
const grants: SharedRateOutput['grants'] = [];
const pauses: SharedRateOutput['pauses'] = [];
/** Counts the script calls and times the takes and pauses; `opOf` finds the bucket operation and its argument in a call's arguments. */
const observed = <T extends object>(client: T, methods: string[], opOf: (args: unknown[]) => [string, string]): T => {
  for (const method of methods) {
    const original = (client as Record<string, unknown>)[method] as (...args: unknown[]) => Promise<unknown>;
    (client as Record<string, unknown>)[method] = (...args: unknown[]) => {
      redisCalls += 1;
      const [op, argument] = opOf(args);
      const askedAt = Date.now();
      const reply = original.apply(client, args);
      void reply.then(
        () => {
          if (op === 'take') lastTake = { askedAt };
          if (op !== 'pause') return;
          const pause = { askedAt, at: Date.now(), ms: Number(argument) };
          pauses.push(pause);
          emit({ event: 'paused', ...pause });
        },
        () => {},
      );
      return reply;
    };
  }
  return client;
};
// The bucket script's arguments: op, capacity, rate, the op's argument, the stale limit.
const scriptArgs = (args: string[]): [string, string] => [args[0]!, args[3]!];

async function connect() {
  if (run.library === 'ioredis') {
    const { Redis } = await import('ioredis');
    const client = new Redis(run.redisUrl, { maxRetriesPerRequest: 1 });
    client.on('error', () => {}); // the limiter falls back; ioredis would only log this
    await new Promise((resolve) => client.once('ready', resolve));
    // evalsha(sha, numKeys, ...keys, ...args)
    const opOf = (args: unknown[]) => scriptArgs((args as string[]).slice(2 + Number(args[1])));
    return { limiterClient: observed(client, ['evalsha', 'eval'], opOf), close: () => client.disconnect() };
  }
  const { createClient } = await import('redis');
  // node-redis emits 'error' while it reconnects: without a listener the process would crash.
  const client = await createClient({ url: run.redisUrl }).on('error', () => {}).connect();
  // evalSha(sha, { keys, arguments })
  const opOf = (args: unknown[]) => scriptArgs((args[1] as { arguments: string[] }).arguments);
  return { limiterClient: observed(client, ['evalSha', 'eval'], opOf), close: () => client.destroy() };
}

const { limiterClient, close } = await connect();
const warnings: string[] = [];
const infos: string[] = [];
const logger = {
  debug() {},
  info: (message: string) => void (infos.push(message), emit({ event: 'info', message })),
  warn: (message: string) => void (warnings.push(message), emit({ event: 'warn', message })),
  error() {},
};

const sent: { at: number; status: number }[] = [];
const observedFetch: typeof fetch = async (input, init) => {
  const record = { at: Date.now(), status: 0 };
  const index = sent.push(record) - 1;
  if (index === run.force429At) {
    record.status = 429;
    emit({ event: 'sent', status: 429, forced: true });
    const body = { error: { code: 'RATE_LIMITED', message: 'Forced by the test.' } };
    return new Response(JSON.stringify(body), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': String(run.retryAfterS ?? 2) } });
  }
  const response = await fetch(input, init);
  record.status = response.status;
  emit({ event: 'sent', status: response.status });
  return response;
};

const seams = run.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: run.commandTimeoutMs };
const rateLimit = redisRateLimiter({ redis: limiterClient as never, requestsPerMinute: run.requestsPerMinute, burst: run.burst }, seams);
const acquire = rateLimit.acquire.bind(rateLimit);
rateLimit.acquire = async (...args) => {
  const finished = await acquire(...args);
  // Served by Redis (not by the fallback, which asks it nothing): the last take granted it.
  if (lastTake) {
    const grant = { askedAt: lastTake.askedAt, at: Date.now() };
    grants.push(grant);
    emit({ event: 'granted', at: grant.at });
  }
  lastTake = undefined;
  return finished;
};
const client = new IntegrationClient({ apiKey: run.apiKey, baseUrl: run.sandboxUrl, fetch: observedFetch, logger, maxRetries: 10, rateLimit });
const prefixed = (item: ReturnType<typeof product>) => ({ ...item, external_id: `${run.prefix}-${item.external_id}` });
let offered = 0;
/** Steered: one item at a time, until `items` or a `finish` line. */
function* itemsUntilFinished() {
  while (offered < run.items && !finished) {
    offered += 1;
    yield prefixed(product(offered - 1, run.storeId));
  }
}
const items = run.steered ? itemsUntilFinished() : products(run.items, run.storeId).map(prefixed);
if (!run.steered) offered = run.items;
emit({ event: 'ready' });
await go;
const result = await client.catalog.upsertProducts(items, { batchSize: 1, concurrency: 4 });
await close();
commands?.close();
const output: SharedRateOutput = { sent, warnings, infos, redisCalls, created: result.summary.created, offered, grants, pauses };
console.log(JSON.stringify(output));
