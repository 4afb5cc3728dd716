// One 100,000-product upsert against the sandbox (another process), in a fresh process so that
// its peak RSS is its own. argv: mode (sdk | raw), sandbox url, api key, store id, item count.
//   sdk – client.catalog.upsertProducts(items): batching (200 batches of 500), local checks,
//         retries armed, and the merged per-item result;
//   raw – a fetch loop posting the same 200 batches and keeping every answered result, which is
//         what the SDK's result holds too.
import { IntegrationClient } from 'integration-sdk';
import { products } from '../lib/products.ts';

const [mode = 'sdk', url = '', apiKey = '', storeId = '', countArg = '100000'] = process.argv.slice(2);
const count = Number(countArg);
const BATCH = 500;
const items = products(count, storeId);

async function viaSdk(): Promise<number> {
  const client = new IntegrationClient({ apiKey, baseUrl: url, rateLimit: false });
  const result = await client.catalog.upsertProducts(items);
  return result.summary.created;
}

async function viaFetch(): Promise<number> {
  const results: unknown[] = [];
  let created = 0;
  for (let start = 0; start < items.length; start += BATCH) {
    const response = await fetch(`${url}/integration/v1/products/bulk`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ items: items.slice(start, start + BATCH) }),
    });
    if (!response.ok) throw new Error(`raw: HTTP ${response.status}`);
    const answer = JSON.parse(await response.text()) as { summary: { created: number }; results: unknown[] };
    created += answer.summary.created;
    for (const result of answer.results) results.push(result);
  }
  return created;
}

const start = performance.now();
const created = mode === 'sdk' ? await viaSdk() : await viaFetch();
const ms = performance.now() - start;
if (created !== count) throw new Error(`${mode}: ${created} of ${count} products created`);
// maxRSS is in KiB: the process's high-water mark, the input array included (the same in both modes).
console.log(JSON.stringify({ mode, ms, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
