// One inbox for many merchants (issue 28), against the sandbox with several merchants over real
// sockets and real SQLite files: each delivery lands under its tenant, verified with that tenant's
// secrets only; a delivery signed for one tenant sent to another's URL is refused and stored
// nowhere; an unknown or disconnected tenant is 404; handlers get the tenant and its client.
import { describe, expect, it } from 'vitest';
import { signWebhook } from 'integration-sdk/webhooks';
import { createInbox, type InboxEntry } from 'integration-sdk/inbox';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { onCleanup } from '../e2e/helpers.ts';
import { tenantsWorld } from './support/tenants-world.ts';
import { collect } from './support/collect.ts';

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
      const entries = await collect(world.inbox.entries({ tenant: id }));
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

  it('takes the tenant from tenantFrom when it is not the last path segment, verifying with that tenant\'s secrets only', async () => {
    // A receiver whose URLs are /webhooks/integration/<tenant>/orders as well as /webhooks/integration/<tenant>.
    const world = await tenantsWorld({ merchants: 2, inbox: { tenantFrom: ({ pathname }) => pathname.split('/')[3] } });
    await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
    await world.tenants.connect('loja-b', { apiKey: world.sandbox.merchants[1]!.keys[0]!.apiKey });
    const order = world.sandbox.createOrder({ store_id: world.sandbox.merchants[0]!.storeIds[0]! });
    await world.sandbox.idle();
    const [secretOfA] = (await tenantsInternals(world.tenants)!.secretsFor('loja-a'))!;
    const signed = (deliveryId: string) => signWebhook({ payload: { event: 'order.created', data: order }, secret: secretOfA!.secret, timestamp: Math.floor(Date.now() / 1000), deliveryId });
    const post = async (url: string, deliveryId: string) => {
      const { body, headers } = signed(deliveryId);
      return (await fetch(url, { method: 'POST', headers, body })).status;
    };
    expect(await post(`${world.webhookUrl('loja-a')}/orders`, 'from-tenant-1')).toBe(200);
    expect(await world.inbox.entry('from-tenant-1')).toMatchObject({ tenant: 'loja-a' });
    expect(await post(`${world.webhookUrl('loja-b')}/orders`, 'from-tenant-2')).toBe(400);
    expect(await post(world.webhookUrl(''), 'from-tenant-3')).toBe(404);
    expect(await world.inbox.entry('from-tenant-2')).toBeUndefined();
    expect(await world.inbox.entry('from-tenant-3')).toBeUndefined();
    // The service's own deliveries, at /webhooks/integration/<tenant>, land under their tenant too.
    expect((await collect(world.inbox.entries({ tenant: 'loja-a' }))).some((entry) => entry.orderId === order.order_id && entry.id !== 'from-tenant-1')).toBe(true);
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

describe('a tenants registry that cannot be read', () => {
  it('answers 503 (the service retries), never 2xx without the row and never 404', async () => {
    const world = await tenantsWorld({ merchants: 1 });
    await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
    const [secret] = (await tenantsInternals(world.tenants)!.secretsFor('loja-a'))!;
    const errors: unknown[] = [];
    const inbox = createInbox({ tenants: world.tenants, store: world.inboxStore, onError: (error) => errors.push(error) });
    onCleanup(() => inbox.close());
    // The registry's database goes away under the receiver.
    await tenantsInternals(world.tenants)!.store.close();
    const { body, headers } = signWebhook({ payload: { event: 'webhook.test', data: {} }, secret: secret!.secret, timestamp: Math.floor(Date.now() / 1000), deliveryId: 'registry-down-1' });
    const answer = await inbox.handler(new Request(world.webhookUrl('loja-a'), { method: 'POST', headers, body }));
    expect([answer.status, await answer.text()]).toEqual([503, 'tenants registry unavailable']);
    expect(errors).toHaveLength(1);
    expect(await world.inbox.entry('registry-down-1')).toBeUndefined();
  });
});

export type { InboxEntry };
