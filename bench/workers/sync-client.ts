// One delta-sync run (or, for the baseline, one upsertProducts) in a fresh process, so that its
// time and peak RSS are its own. Every request is counted on the wire by the client's fetch.
// argv: mode (sync | upsert), url, api key, state file, item count, changedEvery (0: none changed;
// N: every Nth item has another price), rate limit (on | off), input (array | stream), store id.
import { IntegrationClient } from 'integration-sdk';
import { createSync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { product, type BenchProduct } from '../lib/products.ts';

const [mode = 'sync', url = '', apiKey = '', statePath = '', countArg = '100000', changedArg = '0', rate = 'off', input = 'array', storeId = ''] = process.argv.slice(2);
const count = Number(countArg);
const changedEvery = Number(changedArg);

function item(i: number): BenchProduct {
  const base = product(i, storeId || undefined);
  return changedEvery > 0 && i % changedEvery === 0 ? { ...base, price: base.price + 1 } : base;
}
function* stream(): Generator<BenchProduct> {
  for (let i = 0; i < count; i += 1) yield item(i);
}
const items = input === 'array' ? Array.from({ length: count }, (_, i) => item(i)) : stream();

let requests = 0;
let writes = 0;
const counting: typeof fetch = (target, init) => {
  requests += 1;
  const method = init?.method ?? (target instanceof Request ? target.method : 'GET');
  if (method.toUpperCase() !== 'GET') writes += 1;
  return fetch(target, init);
};
const client = new IntegrationClient({ apiKey, baseUrl: url, fetch: counting, ...(rate === 'on' ? {} : { rateLimit: false as const }) });

const start = performance.now();
let counts: Record<string, number | null>;
if (mode === 'upsert') {
  const result = await client.catalog.upsertProducts(items);
  counts = { ...result.summary };
} else {
  const sync = createSync({ client, state: sqliteSyncState({ path: statePath }) });
  const { results: _results, runId: _runId, ...result } = await sync.catalog(items);
  await sync.close();
  counts = result;
}
const ms = performance.now() - start;
const peakRssMb = process.resourceUsage().maxRSS / 1024;
// With --expose-gc: what the run still holds once garbage is collected (none of its input).
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const liveHeapMb = gc ? process.memoryUsage().heapUsed / 2 ** 20 : undefined;
console.log(JSON.stringify({ mode, count, ms, requests, writes, ...counts, peakRssMb, liveHeapMb }));
