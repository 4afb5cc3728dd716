// inbox.reconcile({ tenants, maxReads }) (issue 28): every active tenant's stale orders read back
// through its own client within one shared budget, least recently reconciled tenant first, a report
// per tenant, and `missed` counted on each tenant's own endpoints. Against the sandbox's merchants.
import { describe, expect, it } from 'vitest';
import { tenantsWorld } from './support/tenants-world.ts';
import { collect } from './support/collect.ts';

describe('inbox.reconcile({ tenants })', () => {
  it("recovers each tenant's missed status change under that tenant and lists its missed deliveries on its own endpoint", async () => {
    // Time at the service's pace: a delivery answered 503 is retried a minute later, after the test.
    const world = await tenantsWorld({ merchants: 2, sandbox: { timeScale: 1 } });
    const merchants = world.sandbox.merchants;
    await world.tenants.connect('loja-a', { apiKey: merchants[0]!.keys[0]!.apiKey });
    await world.tenants.connect('loja-b', { apiKey: merchants[1]!.keys[0]!.apiKey });
    const orderA = world.sandbox.createOrder({ store_id: merchants[0]!.storeIds[0]! });
    const orderB = world.sandbox.createOrder({ store_id: merchants[1]!.storeIds[0]! });
    await world.sandbox.idle();
    // loja-b's receiver is down: its status change is not stored.
    world.intercept((req, res) => (req.url?.endsWith('/loja-b') ? (res.writeHead(503).end(), true) : false));
    world.sandbox.setOrderStatus(orderA.order_id, 'preparing');
    world.sandbox.setOrderStatus(orderB.order_id, 'dispatched');
    world.sandbox.createOrder({ store_id: merchants[1]!.storeIds[0]! });
    await expect.poll(() => world.sandbox.deliveries().filter((delivery) => delivery.status !== 'delivered').length).toBe(2);
    world.intercept(undefined);

    const report = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0, maxReads: 100 });
    expect(report.tenants.map((each) => each.tenant).sort()).toEqual(['loja-a', 'loja-b']);
    const [a, b] = ['loja-a', 'loja-b'].map((id) => report.tenants.find((each) => each.tenant === id)!);
    expect(a).toMatchObject({ ordersChecked: 1, statusChanges: 0, missed: [], endpointIds: [(await world.tenants.get('loja-a'))!.endpointId], endpointsGuessed: false });
    const endpointB = (await world.tenants.get('loja-b'))!.endpointId!;
    expect(b).toMatchObject({ ordersChecked: 1, statusChanges: 1, endpointIds: [endpointB], endpointsGuessed: false });
    expect(b!.newMissed).toHaveLength(2);
    // The status change is recovered by reading its order back; the order.created stays open.
    expect(b!.recovered).toMatchObject([{ event: 'order.status_changed', status: 'retrying', endpointId: endpointB }]);
    expect(b!.missed).toMatchObject([{ event: 'order.created', status: 'retrying', endpointId: endpointB }]);
    expect(world.sandbox.deliveries({ event: 'order.created' }).find((delivery) => delivery.id === b!.missed[0]!.deliveryId)).toBeDefined();
    expect(report.missed.map((missed) => missed.tenant)).toEqual(['loja-b']);
    expect(report.reads).toBe(2 * 3); // each tenant: its endpoints' list, its endpoint's log, its one known order

    // The recovered change is loja-b's alone, ready for its handlers.
    const recovered = (await collect(world.inbox.entries({ tenant: 'loja-b' }))).filter((entry) => entry.event === 'order.status_changed');
    expect(recovered).toMatchObject([{ orderId: orderB.order_id, status: 'pending', tenant: 'loja-b' }]);
    expect((await collect(world.inbox.entries({ tenant: 'loja-a' }))).filter((entry) => entry.orderId === orderB.order_id)).toEqual([]);
    expect(await world.inbox.stats({ tenant: 'loja-b' })).toMatchObject({ missed: 1 });
    expect((await world.inbox.missed({ tenant: 'loja-a' })).length).toBe(0);
  });

  it('shares one budget across tenants, least recently reconciled first, and goes on with the others next call', async () => {
    const world = await tenantsWorld({ merchants: 3, sandbox: { timeScale: 1 } });
    const ids = ['loja-a', 'loja-b', 'loja-c'];
    for (const [index, id] of ids.entries()) {
      await world.tenants.connect(id, { apiKey: world.sandbox.merchants[index]!.keys[0]!.apiKey });
      world.sandbox.createOrder({ store_id: world.sandbox.merchants[index]!.storeIds[0]! });
    }
    await world.sandbox.idle();
    // A tenant's turn costs 3 reads here (its endpoints, its log, its one order): 7 reach two tenants.
    const first = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0, maxReads: 7 });
    expect(first.tenants.map((each) => each.tenant)).toEqual(['loja-a', 'loja-b']);
    expect(first).toMatchObject({ reads: 6, notReached: 1 });
    const second = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0, maxReads: 7 });
    expect(second.tenants.map((each) => each.tenant)).toEqual(['loja-c', 'loja-a']);
    const third = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0, maxReads: 3 });
    expect(third.tenants.map((each) => each.tenant)).toEqual(['loja-b']);
  });

  it("goes on with the other tenants when one tenant's reconcile fails, reports it, and saves its turn", async () => {
    // The service answers 500 for one order of loja-a, every time (its reconcile stops there).
    let poisoned = '';
    const fetch500: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (poisoned !== '' && request.url.endsWith(`/orders/${poisoned}`)) return Response.json({ error: { code: 'INTERNAL', message: 'boom' } }, { status: 500 });
      return fetch(request);
    };
    const world = await tenantsWorld({ merchants: 3, sandbox: { timeScale: 1 }, fetch: fetch500 });
    const ids = ['loja-a', 'loja-b', 'loja-c'];
    const orders = [];
    for (const [index, id] of ids.entries()) {
      await world.tenants.connect(id, { apiKey: world.sandbox.merchants[index]!.keys[0]!.apiKey });
      orders.push(world.sandbox.createOrder({ store_id: world.sandbox.merchants[index]!.storeIds[0]! }));
    }
    await world.sandbox.idle();
    poisoned = orders[0]!.order_id;

    const first = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0, maxReads: 100 });
    expect(first.failed).toEqual([{ tenant: 'loja-a', error: expect.stringMatching(/^InternalServerError/) }]);
    expect(first.tenants.map((each) => each.tenant)).toEqual(['loja-b', 'loja-c']);
    expect(first.tenants.map((each) => each.ordersChecked)).toEqual([1, 1]);
    expect(first.reads).toBe(3 * 3);
    // Its run is saved: with room for one tenant a call, it takes its turn once a round, not every call.
    const turns: string[] = [];
    for (let call = 0; call < 3; call += 1) {
      const report = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0, maxReads: 3 });
      turns.push(...report.tenants.map((each) => each.tenant), ...report.failed.map((each) => `${each.tenant} failed`));
    }
    expect(turns).toEqual(['loja-a failed', 'loja-b', 'loja-c']);
  });

  it("keeps reporting a tenant's open miss after its webhook secret is rotated, until the miss ends", async () => {
    const world = await tenantsWorld({ merchants: 1, sandbox: { timeScale: 1 } });
    const merchant = world.sandbox.merchants[0]!;
    await world.tenants.connect('loja-a', { apiKey: merchant.keys[0]!.apiKey });
    // The receiver is down: the order.created is retrying (a minute later, after the test).
    world.intercept((_req, res) => (res.writeHead(503).end(), true));
    world.sandbox.createOrder({ store_id: merchant.storeIds[0]! });
    await expect.poll(() => world.sandbox.deliveries({ event: 'order.created' }).filter((delivery) => delivery.status === 'retrying').length).toBe(1);
    world.intercept(undefined);
    const before = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0 });
    expect(before.missed).toMatchObject([{ tenant: 'loja-a', event: 'order.created' }]);
    const oldEndpoint = before.missed[0]!.endpointId;

    await world.tenants.rotateWebhookSecret('loja-a');
    const after = await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0 });
    expect(after.tenants[0]!.endpointIds).not.toContain(oldEndpoint);
    expect(after.missed.map((missed) => missed.deliveryId)).toEqual([before.missed[0]!.deliveryId]);
    expect((await world.inbox.missed({ tenant: 'loja-a' })).map((missed) => missed.deliveryId)).toEqual([before.missed[0]!.deliveryId]);
    // Acknowledged, it ends, and the report says so.
    expect(await world.inbox.acknowledgeMissed(before.missed[0]!.deliveryId, { by: 'ops', tenant: 'loja-a' })).toBe(1);
    expect((await world.inbox.reconcile({ tenants: world.tenants, staleAfterMinutes: 0 })).missed).toEqual([]);
  });
});
