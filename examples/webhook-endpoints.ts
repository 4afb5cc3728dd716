// Registers a receiver, stores its secret, sends a test delivery and reads the delivery log, then
// deletes the endpoint again unless --keep is given: an endpoint whose receiver does not answer
// fails every delivery, and each one counts against the limit of 5 per integration. When an
// endpoint for the URL exists already (an earlier run's --keep), it is used as it is: its secret
// was shown when it was created and cannot be shown again, so running this again and again never
// piles endpoints up, nor replaces a secret a receiver already uses.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... node examples/webhook-endpoints.ts [receiver URL] [--keep]
//
// With the sandbox (`npx integration-sdk sandbox` prints the two variables) and a receiver of
// examples/webhooks/ on port 3000:
//   node examples/webhook-endpoints.ts http://127.0.0.1:3000/webhooks --keep
//   WEBHOOK_SECRET=$(cat .webhook-secret) node examples/webhooks/node-http.ts
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { IntegrationClient, SsrfBlockedError, WebhookLimitReachedError } from 'integration-sdk';

const { values, positionals } = parseArgs({ options: { keep: { type: 'boolean', default: false } }, allowPositionals: true });
const receiverUrl = positionals[0] ?? 'https://erp.example.com/hooks';
const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });

/** The endpoint for `url`: the one registered already, or a new one whose secret is stored. */
async function endpointFor(url: string): Promise<{ id: string; created: boolean }> {
  const existing = (await client.webhooks.list()).find((endpoint) => endpoint.url === url);
  if (existing) {
    console.log(`using ${existing.id}, registered for ${url} before (its secret is the one stored then; to replace it, delete the endpoint and run this again)`);
    return { id: existing.id, created: false };
  }
  const endpoint = await client.webhooks.create({ url, events: ['order.created', 'order.status_changed'] });
  // The secret is shown this once: keep it where the receiver can read it (here a file, for the demo).
  await writeFile('.webhook-secret', endpoint.secret, { mode: 0o600 });
  console.log(`registered ${endpoint.id}; secret in .webhook-secret; ${endpoint.warning}`);
  return { id: endpoint.id, created: true };
}

try {
  const endpoint = await endpointFor(receiverUrl);
  const { delivery_id } = await client.webhooks.test(endpoint.id);
  console.log(`test delivery ${delivery_id} sent`);

  for (const delivery of await client.webhooks.deliveries(endpoint.id, { limit: 5 })) {
    console.log(`${delivery.event} ${delivery.status} after ${delivery.attempt_count} attempt(s), last answer ${delivery.response_status ?? '-'}`);
  }

  if (!endpoint.created) {
    // Someone's receiver may use it: only an endpoint this run registered is deleted.
  } else if (values.keep) {
    console.log(`kept ${endpoint.id}: start the receiver with WEBHOOK_SECRET=$(cat .webhook-secret)`);
  } else {
    await client.webhooks.delete(endpoint.id);
    console.log(`deleted ${endpoint.id} (--keep keeps it)`);
  }
} catch (error) {
  if (error instanceof SsrfBlockedError) console.error('The URL was refused: it must be https:// on a public host.');
  else if (error instanceof WebhookLimitReachedError) console.error('5 endpoints already: delete one first (integration-sdk webhooks list, then webhooks delete <id>).');
  else throw error;
  process.exitCode = 1;
}

const endpoints = await client.webhooks.list();
console.log(`${endpoints.length} endpoint(s) registered:`);
for (const endpoint of endpoints) {
  console.log(`  ${endpoint.id} ${endpoint.url} failures in a row: ${endpoint.consecutive_failures}`);
}
