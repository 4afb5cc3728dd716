// Memory per tenant as docs/tenants.md defines it: (heapUsed + external) after a GC with N connected
// tenants, each put through `steps`, minus the same before createTenants, divided by N. Steps today:
// `connect` (against the sandbox), `client` (tenants.client(id) and one health() through it);
// receiving one delivery per tenant is the next step to add (issue 28: `deliver`).
// The baseline in the same process: the retained size of one plain IntegrationClient.
// argv: sandbox url, receiver url, keys file, store file, steps (comma-separated).
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { IntegrationClient } from 'integration-sdk';
import { createTenants } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';

const [url = '', receiverUrl = '', keysFile = '', storePath = '', stepsArg = 'connect,client'] = process.argv.slice(2);
const keys = JSON.parse(readFileSync(keysFile, 'utf8')) as string[];
const steps = new Set(stepsArg.split(','));
const gc = (globalThis as { gc?: () => void }).gc!;
const CONCURRENCY = 16;

async function settled(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    // Finalizers (dropped clients) run between turns of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

async function inBatches(ids: string[], work: (id: string, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < ids.length) {
      const index = next++;
      await work(ids[index]!, index);
    }
  }));
}

// Baseline: plain clients held in an array.
const plainBefore = await settled();
const plain = Array.from({ length: 1000 }, (_, i) => new IntegrationClient({ apiKey: keys[i % keys.length]!, baseUrl: url }));
const plainBytes = ((await settled()) - plainBefore) / plain.length;
plain.length = 0;

const before = await settled();
const tenants = createTenants({
  store: sqliteTenantStore({ path: storePath }),
  encryptionKey: randomBytes(32).toString('base64'),
  baseUrl: url,
  webhookUrl: (id) => `${receiverUrl}/integration/${id}`,
  // The budget is not what is measured: wide enough never to wait.
  keyBudget: { requestsPerMinute: 1e9, burst: 1e9 },
  egress: { requestsPerMinute: 1e9, burst: 1e9 },
});
const ids = keys.map((_, i) => `tenant-${i}`);
const started = performance.now();
if (steps.has('connect')) await inBatches(ids, (id, i) => tenants.connect(id, { apiKey: keys[i]! }));
const connectS = (performance.now() - started) / 1000;
if (steps.has('client')) await inBatches(ids, (id) => tenants.client(id).health());
const after = await settled();
console.log(JSON.stringify({
  tenants: ids.length,
  steps: [...steps],
  bytesPerTenant: (after - before) / ids.length,
  plainClientBytes: plainBytes,
  connectS,
  heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
}));
await tenants.close();
