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

const dir = tempDir('inbox-copies');
afterAll(() => dir.remove());

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('one merchant, two endpoints at one URL, an inbox given both secrets', () => {
  it('runs each order event once, keeps both deliveries, and runs a transition the order really repeats again', async () => {
    const sandbox = await startSandbox({ timeScale: 0.001 });
    const client = clientFor(sandbox).client;
    let listener: Parameters<typeof createServer>[1] = (_req, res) => res.writeHead(503).end();
    const server = createServer((req, res) => listener!(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/integration`;
    const events: ['order.created', 'order.status_changed'] = ['order.created', 'order.status_changed'];
    const first = await client.webhooks.create({ url, events });
    const second = await client.webhooks.create({ url, events });
    const inbox = createInbox({ secret: [first.secret, second.secret], store: sqliteStore({ path: `${dir.path}/copies.db` }) });
    onCleanup(() => inbox.close());
    listener = inbox.handler.node;

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
    const entries = await all(inbox.entries());
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
