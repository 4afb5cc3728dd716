// Registers a receiver, stores its secret, sends a test delivery and reads the delivery log.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... node examples/webhook-endpoints.ts https://erp.example.com/hooks
import { writeFile } from 'node:fs/promises';
import { IntegrationClient, SsrfBlockedError, WebhookLimitReachedError } from 'integration-sdk';

const receiverUrl = process.argv[2] ?? 'https://erp.example.com/hooks';
const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });

try {
  const endpoint = await client.webhooks.create({ url: receiverUrl, events: ['order.created', 'order.status_changed'] });
  // The secret is shown this once: keep it where the receiver can read it (here a file, for the demo).
  await writeFile('.webhook-secret', endpoint.secret, { mode: 0o600 });
  console.log(`registered ${endpoint.id}; ${endpoint.warning}`);

  const { delivery_id } = await client.webhooks.test(endpoint.id);
  console.log(`test delivery ${delivery_id} sent`);

  for (const delivery of await client.webhooks.deliveries(endpoint.id, { limit: 5 })) {
    console.log(`${delivery.event} ${delivery.status} after ${delivery.attempt_count} attempt(s), last answer ${delivery.response_status ?? '-'}`);
  }
} catch (error) {
  if (error instanceof SsrfBlockedError) console.error('The URL was refused: it must be https:// on a public host.');
  else if (error instanceof WebhookLimitReachedError) console.error('5 endpoints already: delete one first (client.webhooks.delete).');
  else throw error;
  process.exitCode = 1;
}

for (const endpoint of await client.webhooks.list()) {
  console.log(`${endpoint.id} ${endpoint.url} failures in a row: ${endpoint.consecutive_failures}`);
}
