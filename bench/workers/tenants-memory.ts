// Memory per tenant as docs/tenants.md defines it: (heapUsed + external) after a GC with N connected
// tenants, each put through `steps`, minus the same before createTenants, divided by N. Steps:
// `connect` (against the sandbox), `client` (tenants.client(id) and one health() through it),
// `deliver` (one signed delivery per tenant received by an inbox given the registry, in this
// process: its secrets read and cached, its entry stored).
// The baseline in the same process: the retained size of one plain IntegrationClient.
// argv: sandbox url, receiver url, keys file, store file, steps (comma-separated).
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { IntegrationClient } from 'integration-sdk';
import { createInbox } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createTenants } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { signWebhook } from 'integration-sdk/webhooks';
import { inBatches, secretRecorder, UNLIMITED } from '../lib/tenants-connect.ts';

const [url = '', receiverUrl = '', keysFile = '', storePath = '', stepsArg = 'connect,client'] = process.argv.slice(2);
const keys = JSON.parse(readFileSync(keysFile, 'utf8')) as string[];
const steps = new Set(stepsArg.split(','));
const gc = (globalThis as { gc?: () => void }).gc!;

async function settled(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    // Finalizers (dropped clients) run between turns of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

// Baseline: plain clients held in an array.
const plainBefore = await settled();
const plain = Array.from({ length: 1000 }, (_, i) => new IntegrationClient({ apiKey: keys[i % keys.length]!, baseUrl: url }));
const plainBytes = ((await settled()) - plainBefore) / plain.length;
plain.length = 0;

const recorder = secretRecorder();
const before = await settled();
const tenants = createTenants({
  store: sqliteTenantStore({ path: storePath }),
  encryptionKey: randomBytes(32).toString('base64'),
  baseUrl: url,
  webhookUrl: (id) => `${receiverUrl}/integration/${id}`,
  clientOptions: { fetch: recorder.fetch },
  ...UNLIMITED,
});
const ids = keys.map((_, i) => `tenant-${i}`);
const started = performance.now();
if (steps.has('connect')) await inBatches(ids, (id, i) => tenants.connect(id, { apiKey: keys[i]! }));
const connectS = (performance.now() - started) / 1000;
if (steps.has('client')) await inBatches(ids, (id) => tenants.client(id).health());
const inbox = steps.has('deliver') ? createInbox({ tenants, store: sqliteStore({ path: `${storePath}.inbox` }) }) : undefined;
if (inbox) {
  await inBatches(ids, async (id, index) => {
    const { body, headers } = signWebhook({ payload: { event: 'webhook.test', data: {} }, secret: recorder.secrets.get(id)!, deliveryId: `memory-${index}` });
    const answer = await inbox.handler(new Request(`http://receiver.invalid/webhooks/integration/${id}`, { method: 'POST', headers, body }));
    if (answer.status !== 200) throw new Error(`delivery to ${id} answered ${answer.status}`);
  });
}
// The figure's scaffolding, not the tenants': the secrets as the service showed them.
recorder.secrets.clear();
const after = await settled();
console.log(JSON.stringify({
  tenants: ids.length,
  steps: [...steps],
  bytesPerTenant: (after - before) / ids.length,
  plainClientBytes: plainBytes,
  connectS,
  heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
}));
await inbox?.close();
await tenants.close();
