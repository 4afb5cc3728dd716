import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { OrderSchema } from '../../src/schemas/order.ts';
import { api } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox({ rate: false });
});
afterEach(() => sandbox.close());

describe('createOrder', () => {
  test('builds a full order of spec 2.7 with coherent totals', () => {
    const order = sandbox.createOrder();
    expect(OrderSchema.safeParse(order).success).toBe(true);
    expect(order).toMatchObject({ external_order_id: null, source_channel: 'catalog', status: 'confirmed', store_id: sandbox.storeIds[0] });
    expect(order.items[0]).toMatchObject({ external_id: 'SKU-1001', quantity: 2, unit_price: 24.9, line_total: 49.8 });
    expect(order.totals).toEqual({ subtotal: 49.8, freight: 7.5, discount: 0, total: 57.3 });
    expect(order.delivery.address).not.toHaveProperty('complement');
  });

  test('takes overrides, and gives marketplace orders an external id', () => {
    const order = sandbox.createOrder({
      store_id: sandbox.storeIds[1], source_channel: 'marketplace', customer: { name: 'Ana' },
      items: [{ external_id: 'SKU-1003', quantity: 4, addons: [{ name: 'Extra', quantity: 1, price: 0.5 }] }],
    });
    expect(order.external_order_id).toMatch(/^MKT-/);
    expect(order.customer.name).toBe('Ana');
    expect(order.items[0]?.line_total).toBe(12);
    expect(() => sandbox.createOrder({ store_id: 'nope' })).toThrow(/store_id/);
  });
});

describe('GET /orders', () => {
  test('reads an order by id with updated_at, and by external_order_id', async () => {
    const order = sandbox.createOrder({ external_order_id: 'EXT-1', source_channel: 'marketplace' });
    const byId = await api(sandbox)('GET', `/orders/${order.order_id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ ...order, updated_at: expect.any(String) });
    const byExternal = await api(sandbox)('GET', '/orders?external_order_id=EXT-1');
    expect(byExternal.body.order_id).toBe(order.order_id);
    sandbox.setOrderStatus(order.order_id, 'cancelled');
    expect((await api(sandbox)('GET', `/orders/${order.order_id}`)).body.status).toBe('cancelled');
  });

  test('missing, or outside the key\'s stores: 404 NOT_FOUND either way', async () => {
    const elsewhere = sandbox.createOrder({ store_id: sandbox.storeIds[1], external_order_id: 'EXT-2' });
    const one = api(sandbox, sandbox.keys.oneStore);
    const outside = await one('GET', `/orders/${elsewhere.order_id}`);
    const missing = await one('GET', '/orders/00000000-0000-4000-8000-000000000000');
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual(missing.body);
    expect(outside.body.error.code).toBe('NOT_FOUND');
    expect((await one('GET', '/orders?external_order_id=EXT-2')).status).toBe(404);
    expect((await api(sandbox)('GET', '/orders?external_order_id=EXT-2')).status).toBe(200);
  });

  test('GET /orders without external_order_id is 400 VALIDATION_ERROR', async () => {
    const answer = await api(sandbox)('GET', '/orders');
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toEqual([{ path: 'external_order_id', message: expect.any(String) }]);
  });
});
