// Streams `count` products from an async generator against bench/workers/count-server.ts, in a
// fresh process so that its maxRSS is the peak of this run alone. argv: mode, server url, count.
//   sdk – client.catalog.upsertBatches(stream): nothing kept of each yielded batch but a counter,
//         as a caller streaming a huge input would;
//   raw – a reference, not a target: the same stream cut into 500-item fetch posts, nothing kept.
//         It shows how much of the peak is Node, undici and V8's heap sizing rather than the SDK.
// Run with --expose-gc: at the last batch, while the run is still open, one full GC tells how much
// heap the run still holds (the live set, as opposed to garbage V8 has not collected yet).
import { IntegrationClient } from 'integration-sdk';
import { productStream } from '../lib/products.ts';

const [mode = 'sdk', url = '', countArg = '1000000'] = process.argv.slice(2);
const count = Number(countArg);
const BATCH = 500;

function liveHeapMb(): number {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function viaSdk(): Promise<{ created: number; liveMb: number }> {
  const client = new IntegrationClient({ apiKey: 'service_bench_secretsecretsecret', baseUrl: url, rateLimit: false });
  let created = 0;
  let liveMb = 0;
  for await (const batch of client.catalog.upsertBatches(productStream(count))) {
    created += batch.summary.created;
    if (created === count) liveMb = liveHeapMb(); // the generator is suspended: the run's state is live
  }
  return { created, liveMb };
}

async function viaFetch(): Promise<{ created: number; liveMb: number }> {
  let created = 0;
  let liveMb = 0;
  const send = async (items: unknown[]) => {
    const response = await fetch(`${url}/integration/v1/products/bulk`, {
      method: 'POST',
      headers: { 'X-API-Key': 'service_bench_secretsecretsecret', 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ items }),
    });
    const answer = JSON.parse(await response.text()) as { summary: { created: number } };
    created += answer.summary.created;
    if (created === count) liveMb = liveHeapMb();
  };
  let batch: unknown[] = [];
  for await (const item of productStream(count)) {
    batch.push(item);
    if (batch.length === BATCH) {
      await send(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await send(batch);
  return { created, liveMb };
}

const start = performance.now();
const { created, liveMb } = mode === 'sdk' ? await viaSdk() : await viaFetch();
const ms = performance.now() - start;
if (created !== count) throw new Error(`${mode}: ${created} of ${count} products created`);
console.log(JSON.stringify({ mode, count, ms, peakRssMb: process.resourceUsage().maxRSS / 1024, liveHeapAtEndMb: liveMb }));
