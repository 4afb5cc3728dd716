// Two endpoints at one URL (issue 28): while both deliver, every order event arrives twice, with two
// delivery ids, signed with two secrets. An inbox given both secrets runs each order event once and
// keeps both deliveries (the later one marked as the copy); an order that really goes through the
// same transition again runs again, through both endpoints or through one.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createInbox, type InboxEntry } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { clientFor, onCleanup, startSandbox } from '../e2e/helpers.ts';
import { tempDir } from './support/temp-dir.ts';
import { collect } from './support/collect.ts';
import { tenantsWorld } from './support/tenants-world.ts';

const dir = tempDir('inbox-copies');
afterAll(() => dir.remove());

const events: ['order.created', 'order.status_changed'] = ['order.created', 'order.status_changed'];

/** A server at the webhook URL answering 503 until `receiver.listener` is set (a receiver deployed). */
async function startReceiver() {
  const receiver: { url: string; listener: Parameters<typeof createServer>[1] } = { url: '', listener: (_req, res) => res.writeHead(503).end() };
  const server = createServer((req, res) => receiver.listener!(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/integration`;
  return receiver;
}

describe('one merchant, two endpoints at one URL, an inbox given both secrets', () => {
  it('runs each order event once, keeps both deliveries, and runs a transition the order really repeats again', async () => {
    const sandbox = await startSandbox({ timeScale: 0.001 });
    const client = clientFor(sandbox).client;
    const receiver = await startReceiver();
    const { url } = receiver;
    const first = await client.webhooks.create({ url, events });
    const second = await client.webhooks.create({ url, events });
    const inbox = createInbox({ secret: [first.secret, second.secret], store: sqliteStore({ path: `${dir.path}/copies.db` }) });
    onCleanup(() => inbox.close());
    receiver.listener = inbox.handler.node;

    const runs: string[] = [];
    const worker = inbox.startWorker({
      concurrency: 4,
      handlers: {
        'order.created': (event) => void runs.push(`created ${event.data.status}`),
        'order.status_changed': (event) => void runs.push(`${event.data.previous_status} -> ${event.data.status}`),
      },
    });
    const order = sandbox.createOrder();
    for (const status of ['preparing', 'confirmed', 'preparing']) sandbox.setOrderStatus(order.order_id, status);
    await sandbox.idle();
    // The second endpoint goes (the end of a rotation); the inbox keeps both secrets.
    await client.webhooks.delete(second.id);
    for (const status of ['confirmed', 'preparing']) sandbox.setOrderStatus(order.order_id, status);
    await sandbox.idle();
    expect(sandbox.deliveries().every((delivery) => delivery.status === 'delivered')).toBe(true);
    await expect.poll(async () => (await inbox.stats()).pending + (await inbox.stats()).processing, { timeout: 10_000 }).toBe(0);
    await worker.stop();

    expect(runs.sort()).toEqual(['confirmed -> preparing', 'confirmed -> preparing', 'confirmed -> preparing', 'created confirmed', 'preparing -> confirmed', 'preparing -> confirmed'].sort());
    const entries = await collect(inbox.entries());
    const orderEntries = entries.filter((entry: InboxEntry) => entry.orderId === order.order_id);
    expect(orderEntries).toHaveLength(10);
    const copies = orderEntries.filter((entry) => entry.copyOf !== null);
    expect(copies).toHaveLength(4);
    // Each copy names an original verified by the other secret; every copy is done without a run.
    for (const copy of copies) {
      const original = orderEntries.find((entry) => entry.id === copy.copyOf)!;
      expect(original.verifiedBy).not.toBe(copy.verifiedBy);
      expect(original.event).toBe(copy.event);
      expect(copy).toMatchObject({ status: 'done', attempts: 0 });
    }
    expect(new Set(orderEntries.map((entry) => entry.verifiedBy)).size).toBe(2);
  });
});

/** What a worker runs of `orderId`: `previous -> status` per change, `created` for the order. */
function runsOf(orderId: string) {
  const runs: string[] = [];
  const handlers = {
    'order.created': (event: { data: { order_id: string } }) => void (event.data.order_id === orderId && runs.push('created')),
    'order.status_changed': (event: { data: { order_id: string; previous_status: string; status: string } }) =>
      void (event.data.order_id === orderId && runs.push(`${event.data.previous_status} -> ${event.data.status}`)),
  };
  return { runs, handlers };
}

describe('a rotation, then the order really goes through a transition again: the repeat runs', () => {
  it('one merchant (webhooks rotate by hand): the old endpoint\'s delivery from before the new one existed takes nothing for its copy', async () => {
    const sandbox = await startSandbox({ timeScale: 0.001 });
    const client = clientFor(sandbox).client;
    const receiver = await startReceiver();
    const { url } = receiver;
    const path = `${dir.path}/rotate-by-hand.db`;
    const old = await client.webhooks.create({ url, events });
    const order = sandbox.createOrder();
    const { runs, handlers } = runsOf(order.order_id);
    /** The receiver redeployed with `secrets`, on the same store file. */
    const deploy = async (secret: string[]) => {
      const inbox = createInbox({ secret, store: sqliteStore({ path }) });
      const worker = inbox.startWorker({ concurrency: 2, handlers });
      receiver.listener = inbox.handler.node;
      return async () => {
        await expect.poll(async () => (await inbox.stats()).pending + (await inbox.stats()).processing, { timeout: 10_000 }).toBe(0);
        await worker.stop();
        await inbox.close();
      };
    };
    let undeploy = await deploy([old.secret]);
    sandbox.setOrderStatus(order.order_id, 'preparing');
    await sandbox.idle();
    // Step 1 registers the new endpoint and the receiver is given both secrets; step 3 deletes the old one.
    await undeploy();
    const next = await client.webhooks.create({ url, events });
    undeploy = await deploy([old.secret, next.secret]);
    await client.webhooks.delete(old.id);
    await undeploy();
    undeploy = await deploy([next.secret]);
    for (const status of ['confirmed', 'preparing']) sandbox.setOrderStatus(order.order_id, status);
    await sandbox.idle();
    await undeploy();
    expect(runs).toEqual(['created', 'confirmed -> preparing', 'preparing -> confirmed', 'confirmed -> preparing']);
  });

  it("many merchants (rotateWebhookSecret): the old endpoint's delivery from before the rotation takes nothing for its copy", async () => {
    const world = await tenantsWorld({ merchants: 1 });
    await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
    const order = world.sandbox.createOrder({ store_id: world.sandbox.merchants[0]!.storeIds[0]! });
    const { runs, handlers } = runsOf(order.order_id);
    const worker = world.inbox.startWorker({ concurrency: 2, handlers });
    world.sandbox.setOrderStatus(order.order_id, 'preparing');
    await world.sandbox.idle();
    await world.tenants.rotateWebhookSecret('loja-a');
    for (const status of ['confirmed', 'preparing']) world.sandbox.setOrderStatus(order.order_id, status);
    await world.sandbox.idle();
    await expect.poll(async () => (await world.inbox.stats()).pending + (await world.inbox.stats()).processing, { timeout: 10_000 }).toBe(0);
    await worker.stop();
    expect(runs).toEqual(['created', 'confirmed -> preparing', 'preparing -> confirmed', 'confirmed -> preparing']);
  });
});
