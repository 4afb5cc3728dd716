// The recommended integration order of spec part 1, walked end to end against the local sandbox:
// a real HTTP server on 127.0.0.1, a real webhook receiver, real signatures. One line per step;
// exits non-zero at the first step that fails. Deliveries go through a durable inbox on SQLite
// (integration-sdk/inbox) and its worker, which prints what it did with each event.
//
//   npm run demo
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IntegrationClient } from 'integration-sdk';
import { createInbox, type Inbox, type InboxEventHandler } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox } from 'integration-sdk/sandbox';
import type { WebhookEvent } from 'integration-sdk/webhooks';

const STEP_TIMEOUT_MS = 10_000;
let stepNumber = 0;

async function step(title: string, run: () => Promise<string>): Promise<void> {
  stepNumber += 1;
  const started = performance.now();
  try {
    const checked = await run();
    console.log(`✔ ${String(stepNumber).padStart(2)}. ${title}: ${checked} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    console.error(`✘ ${String(stepNumber).padStart(2)}. ${title}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    throw error;
  }
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Events the inbox worker handled, and a way to wait for the next one of a kind. */
function createEventLog() {
  const received: WebhookEvent[] = [];
  const waiters: { match: (event: WebhookEvent) => boolean; resolve: (event: WebhookEvent) => void }[] = [];
  return {
    received,
    push(event: WebhookEvent) {
      received.push(event);
      for (const waiter of waiters.splice(0)) {
        if (waiter.match(event)) waiter.resolve(event);
        else waiters.push(waiter);
      }
    },
    next(match: (event: WebhookEvent) => boolean): Promise<WebhookEvent> {
      const seen = received.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching event reached the receiver in time')), STEP_TIMEOUT_MS);
        waiters.push({ match, resolve: (event) => { clearTimeout(timer); resolve(event); } });
      });
    },
  };
}

async function main(): Promise<void> {
  const sandbox = await createSandbox();
  const inbox = createEventLog();
  const inboxDir = mkdtempSync(join(tmpdir(), 'integration-demo-'));
  // The receiver verifies every delivery over the raw bytes, stores it in the inbox (a SQLite
  // file), and answers 2xx only then; the worker handles what was stored. Both exist once the
  // endpoint is registered and the secret is known.
  let durable: Inbox | undefined;
  const useSecret = (secret: string) => {
    durable = createInbox({ secret, store: sqliteStore({ path: join(inboxDir, 'inbox.db') }) });
    const record: InboxEventHandler = async (event, ctx) => {
      const order = event.data as { display_number?: string; status?: string };
      const what = event.event === 'order.created' ? `order #${order.display_number}` : event.event === 'order.status_changed' ? `order #${order.display_number} → ${order.status}` : event.delivery_id;
      console.log(`     inbox worker: ${event.event} ${what} handled (attempt ${ctx.attempt})`);
      inbox.push(event);
    };
    durable.startWorker({ handlers: { 'order.created': record, 'order.status_changed': record, 'webhook.test': record } });
  };
  const handler = () => durable?.handler;
  const receiver = createServer((req, res) => {
    const current = handler();
    if (current) return current.node(req, res);
    res.writeHead(503).end();
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  console.log(`sandbox ${sandbox.url} · receiver ${receiverUrl}`);

  const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  const storeId = sandbox.storeIds[0]!;
  const externalId = `DEMO-${Date.now()}`;
  let webhookId = '';
  let orderId = '';
  const externalOrderId = `MKT-${Date.now()}`;

  try {
    await step('health: the key is valid and the environment enabled', async () => {
      const health = await client.health();
      check(health.status === 'ok', `status is ${health.status}`);
      return `status ok, merchant ${health.merchant_id}, ${health.scopes.length} scopes`;
    });

    await step('send one product and check the summary', async () => {
      const result = await client.catalog.upsertProducts([{ external_id: externalId, name: 'Café 500g', price: 32.9, gtin: '7891000100103', category: 'Coffee' }]);
      check(result.summary.created === 1 && result.summary.errors === 0, `summary ${JSON.stringify(result.summary)}`);
      return `created ${result.summary.created}, sync ${result.sync_ids[0]}`;
    });

    await step('set stock and price', async () => {
      const result = await client.stock.set([{ external_id: externalId, store_id: storeId, stock_quantity: 12.345, price_override: 29.9 }]);
      check(result.summary.updated === 1 && result.results[0]?.status === 'updated', `summary ${JSON.stringify(result.summary)}`);
      return 'stock 12.345 (kept to the gram) and price 29.90 in one store';
    });

    await step('register a webhook for order.created and order.status_changed', async () => {
      const endpoint = await client.webhooks.create({ url: receiverUrl, events: ['order.created', 'order.status_changed'] });
      check(endpoint.secret.startsWith('whsec_'), 'the secret is not a whsec_ value');
      useSecret(endpoint.secret);
      webhookId = endpoint.id;
      return `endpoint ${endpoint.id}, secret stored (shown once)`;
    });

    await step('call the webhook test', async () => {
      const { delivery_id } = await client.webhooks.test(webhookId);
      const event = await inbox.next((e) => e.delivery_id === delivery_id);
      check(event.event === 'webhook.test', `got ${event.event}`);
      return `webhook.test delivered (${delivery_id})`;
    });

    await step('verify the signature in the receiver', async () => {
      const tampered = await fetch(receiverUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-event': 'webhook.test', 'x-service-delivery-id': crypto.randomUUID(), 'x-service-timestamp': String(Math.floor(Date.now() / 1000)), 'x-service-signature-256': `sha256=${'0'.repeat(64)}` },
        body: '{}',
      });
      check(tampered.status === 400, `a forged delivery got ${tampered.status}`);
      return 'genuine deliveries verified; a forged one refused with 400';
    });

    await step('create a test order and confirm order.created', async () => {
      const order = await sandbox.createOrder({ store_id: storeId, external_order_id: externalOrderId, source_channel: 'marketplace' });
      orderId = order.order_id;
      const event = await inbox.next((e) => e.event === 'order.created' && e.data.order_id === orderId);
      check(event.event === 'order.created', 'wrong event');
      return `order #${event.data.display_number} received with ${event.data.items.length} item(s)`;
    });

    await step('change its status and confirm order.status_changed', async () => {
      await sandbox.setOrderStatus(orderId, 'preparing');
      const event = await inbox.next((e) => e.event === 'order.status_changed' && e.data.order_id === orderId);
      check(event.event === 'order.status_changed', 'wrong event');
      return `${event.data.previous_status} → ${event.data.status}`;
    });

    await step('read the order back by id and by external_order_id', async () => {
      const byId = await client.orders.get(orderId);
      const byExternal = await client.orders.findByExternalId(externalOrderId);
      check(byId.status === 'preparing', `status read back is ${byId.status}`);
      check(byExternal?.order_id === orderId, 'external_order_id found another order');
      return `status ${byId.status}, same order both ways`;
    });

    await step('loyalty balance by phone and an idempotent points credit', async () => {
      const phone = sandbox.seed.customers[0]!.phone;
      const before = await client.loyalty.balance({ phone });
      const key = `demo-credit-${externalOrderId}`;
      const first = await client.loyalty.credit({ phone, points: 50, idempotency_key: key, description: 'demo' });
      const again = await client.loyalty.credit({ phone, points: 50, idempotency_key: key, description: 'demo' });
      const after = await client.loyalty.balance({ phone });
      check(first.entry.id === again.entry.id, 'the repeated credit made a second entry');
      check(after.points === before.points + 50, `balance went ${before.points} → ${after.points}`);
      return `${before.points} → ${after.points} points; the repeat was not credited twice`;
    });

    await step('check the delivery log', async () => {
      const deliveries = await client.webhooks.deliveries(webhookId, { limit: 10 });
      const endpoint = (await client.webhooks.list()).find((e) => e.id === webhookId);
      check(deliveries.length >= 3 && deliveries.every((d) => d.status === 'delivered'), `statuses ${deliveries.map((d) => d.status).join(', ')}`);
      check(endpoint?.consecutive_failures === 0, `consecutive_failures ${endpoint?.consecutive_failures}`);
      return `${deliveries.length} deliveries, all delivered; consecutive_failures 0`;
    });

    await step('switch to the final key', async () => {
      const finalClient = new IntegrationClient({ apiKey: sandbox.keys.oneStore, baseUrl: sandbox.url });
      const health = await finalClient.health();
      check(health.status === 'ok', `status is ${health.status}`);
      return `a store-restricted key answers: stores ${health.store_ids.join(', ')}`;
    });
    console.log(`\nAll ${stepNumber} steps passed.`);
  } finally {
    receiver.close();
    await durable?.close();
    await sandbox.close();
    rmSync(inboxDir, { recursive: true, force: true });
  }
}

main().catch(() => {
  process.exitCode = 1;
});
