// One inbox for many merchants (issue 28), against the sandbox with several merchants over real
// sockets and real SQLite files: each delivery lands under its tenant, verified with that tenant's
// secrets only; a delivery signed for one tenant sent to another's URL is refused and stored
// nowhere; an unknown or disconnected tenant is 404; handlers get the tenant and its client.
import { describe, expect, it } from 'vitest';
import { signWebhook } from 'integration-sdk/webhooks';
import type { InboxEntry } from 'integration-sdk/inbox';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { tenantsWorld } from './support/tenants-world.ts';

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('createInbox({ tenants })', () => {
  it("stores each merchant's real deliveries under its tenant, and its handlers run with the tenant and its client", async () => {
    const world = await tenantsWorld({ merchants: 3 });
    const ids = ['loja-a', 'loja-b', 'loja-c'];
    for (const [index, id] of ids.entries()) await world.tenants.connect(id, { apiKey: world.sandbox.merchants[index]!.keys[0]!.apiKey });
    const orders = ids.map((_id, index) => world.sandbox.createOrder({ store_id: world.sandbox.merchants[index]!.storeIds[0]! }));
    world.sandbox.setOrderStatus(orders[1]!.order_id, 'preparing');
    await world.sandbox.idle();
    expect(world.sandbox.deliveries().every((delivery) => delivery.status === 'delivered')).toBe(true);

    for (const [index, id] of ids.entries()) {
      const entries = await all(world.inbox.entries({ tenant: id }));
      const events = entries.map((entry) => [entry.event, entry.orderId]);
      expect(events).toEqual(
        expect.arrayContaining([
          ['webhook.test', null],
          ['order.created', orders[index]!.order_id],
        ]),
      );
      // Only its own merchant's orders; each verified with its own endpoint's secret.
      expect(entries.filter((entry) => entry.orderId !== null).every((entry) => entry.orderId === orders[index]!.order_id)).toBe(true);
      const endpointId = (await world.tenants.get(id))!.endpointId;
      expect(entries.every((entry) => entry.tenant === id && entry.verifiedBy === endpointId)).toBe(true);
    }
    expect(await world.inbox.stats({ tenant: 'loja-b' })).toMatchObject({ received: 3, pending: 3 });
    expect((await world.inbox.stats()).received).toBe(7);

    const seen: Array<{ tenant: string | null; order: string; fromClient: string }> = [];
    const worker = world.inbox.startWorker({
      concurrency: 4,
      handlers: {
        'order.status_changed': async (event, ctx) => {
          // ctx.order() reads the tenant's own order.created; ctx.client is that tenant's client.
          const order = await ctx.order();
          const readBack = await ctx.client!.orders.get(event.data.order_id);
          seen.push({ tenant: ctx.tenant, order: order.order_id, fromClient: readBack.status });
        },
      },
    });
    await expect.poll(async () => (await world.inbox.stats()).pending, { timeout: 10_000 }).toBe(0);
    await worker.stop();
    expect(seen).toEqual([{ tenant: 'loja-b', order: orders[1]!.order_id, fromClient: 'preparing' }]);
  });

  it("refuses a delivery signed with one tenant's secret sent to another tenant's URL, storing it nowhere", async () => {
    const world = await tenantsWorld({ merchants: 2 });
    await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
    await world.tenants.connect('loja-b', { apiKey: world.sandbox.merchants[1]!.keys[0]!.apiKey });
    const order = world.sandbox.createOrder({ store_id: world.sandbox.merchants[0]!.storeIds[0]! });
    await world.sandbox.idle();
    const before = (await world.inbox.stats()).received;
    const [secretOfA] = (await tenantsInternals(world.tenants)!.secretsFor('loja-a'))!;
    const { body, headers } = signWebhook({ payload: { event: 'order.created', data: order }, secret: secretOfA!.secret, timestamp: Math.floor(Date.now() / 1000), deliveryId: 'cross-tenant-1' });
    const toB = await fetch(world.webhookUrl('loja-b'), { method: 'POST', headers, body });
    expect(toB.status).toBe(400);
    expect(await toB.text()).toBe('signature_mismatch');
    expect((await world.inbox.stats()).received).toBe(before);
    expect(await world.inbox.entry('cross-tenant-1')).toBeUndefined();
    // The same delivery at A's URL is A's.
    const toA = await fetch(world.webhookUrl('loja-a'), { method: 'POST', headers, body });
    expect(toA.status).toBe(200);
    expect(await world.inbox.entry('cross-tenant-1')).toMatchObject({ tenant: 'loja-a' });
  });

  it('answers 404 for a tenant the registry does not know, or no longer: at once after a disconnect here, within a poll after one in another process', async () => {
    const world = await tenantsWorld({ merchants: 2 });
    await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
    await world.tenants.connect('loja-b', { apiKey: world.sandbox.merchants[1]!.keys[0]!.apiKey });
    await world.sandbox.idle();
    const secretOf = async (id: string) => (await tenantsInternals(world.tenants)!.secretsFor(id))![0]!.secret;
    const [secretA, secretB] = [await secretOf('loja-a'), await secretOf('loja-b')];
    let n = 0;
    const post = async (path: string, secret: string) => {
      const { body, headers } = signWebhook({ payload: { event: 'webhook.test', data: {} }, secret, timestamp: Math.floor(Date.now() / 1000), deliveryId: `d-${++n}` });
      return (await fetch(`${world.webhookUrl('')}${path}`, { method: 'POST', headers, body })).status;
    };
    for (const path of ['loja-nobody', 'not%20an%20id', '%2e%2e', '']) expect([path, await post(path, secretA)]).toEqual([path, 404]);
    expect(await post('loja-a', secretA)).toBe(200);
    expect(await post('loja-b', secretB)).toBe(200);

    await world.tenants.disconnect('loja-a');
    expect(await post('loja-a', secretA)).toBe(404);

    // Another process's registry: this receiver forgets loja-b's secrets once it sees the change.
    await world.otherRegistry().disconnect('loja-b');
    await expect.poll(() => post('loja-b', secretB), { timeout: 10_000, interval: 50 }).toBe(404);
    expect(await world.inbox.entry(`d-${n}`)).toBeUndefined();
  });
});

export type { InboxEntry };
