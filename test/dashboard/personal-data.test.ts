import { expect, it } from 'vitest';
import { MASK, payloadForDisplay } from '../../src/dashboard/personal-data.ts';
import { ORDER } from '../webhooks/support/deliveries.ts';

const order = ORDER as { customer: { name: string; phone: string; email: string; address: Record<string, string> }; delivery: { address: Record<string, string> }; items: { product_name: string }[] };

it("masks every field of the customer and the delivery address, and keeps the order's other fields", () => {
  const shown = payloadForDisplay(JSON.stringify({ event: 'order.created', data: ORDER }), false);
  const personal = [order.customer.name, order.customer.phone, order.customer.email, ...Object.values(order.customer.address), ...Object.values(order.delivery.address)];
  for (const value of personal.filter((each) => typeof each === 'string' && each.length > 2)) expect(shown).not.toContain(`"${value}"`);
  const parsed = JSON.parse(shown) as { data: typeof order };
  expect(parsed.data.customer.name).toBe(MASK);
  expect(Object.keys(parsed.data.customer.address)).toEqual(Object.keys(order.customer.address));
  expect(parsed.data.items[0]!.product_name).toBe(order.items[0]!.product_name);
  expect(payloadForDisplay(JSON.stringify({ event: 'order.created', data: ORDER }), true)).toContain(order.customer.phone);
});

it('masks contact fields anywhere in an event this SDK does not know, and hides a payload that is not JSON', () => {
  const shown = payloadForDisplay(JSON.stringify({ event: 'loyalty.changed', data: { member: { phone: '11912345678', email: 'a@b.c' }, points: 3 } }), false);
  expect(shown).not.toContain('11912345678');
  expect(shown).not.toContain('a@b.c');
  expect(shown).toContain('"points": 3');
  expect(payloadForDisplay('name=Maria Silva', false)).not.toContain('Maria');
  expect(payloadForDisplay(null, false)).toMatch(/cleared by retention/);
});

it('masks by an allow-list: free text anywhere (a line note, an address complement, metadata, a field the service adds later) is masked; ids, statuses, times, names of products and every number are shown', () => {
  const phone = '+55 11 91234-5678';
  const data = {
    ...ORDER,
    order_id: '678a5aa3-3b6f-4507-8c5f-e8f8dc3bf364',
    display_number: '68341',
    source_channel: 'whatsapp',
    status: 'confirmed',
    created_at: '2026-11-21T12:00:00.000Z',
    items: [{ external_id: 'SKU-1', product_name: 'Pizza', quantity: 2, unit_price: 39.9, notes: `call Maria at ${phone}`, variations: [{ name: 'Large', price_modifier: 5 }], addons: [{ name: 'Olives', quantity: 1, price: 2 }] }],
    customer: { name: 'Maria Zé', phone, email: 'maria@example.com', address: { street: 'Rua A', complement: `ap 12, ring ${phone}` } },
    delivery: { type: 'delivery', freight_price: 7, address: { street: 'Rua A', complement: 'fundos' } },
    payment: { method: 'pix', status: 'paid', change_for: null },
    metadata: { contact: phone, nested: { whatsapp: phone }, tags: ['vip', phone] },
    courier_note: `leave with the doorman, ${phone}`,
    paid_at: 'yesterday, when Maria paid',
    gift: true,
  };
  const shown = JSON.parse(payloadForDisplay(JSON.stringify({ event: 'order.created', delivery_id: 'dlv-1', ts: 1_800_000_000, data }), false)) as { event: string; delivery_id: string; ts: number; data: typeof data };
  expect(JSON.stringify(shown)).not.toContain('91234');
  expect(JSON.stringify(shown)).not.toContain('Maria');
  const masked = shown.data;
  expect([masked.items[0]!.notes, masked.customer.address.complement, masked.delivery.address.complement, masked.courier_note, masked.paid_at]).toEqual(Array(5).fill(MASK));
  // metadata is free-form: its keys are masked too, its shape kept.
  expect(masked.metadata).toEqual({ [`${MASK}1`]: MASK, [`${MASK}2`]: { [`${MASK}1`]: MASK }, [`${MASK}3`]: [MASK, MASK] });
  expect(shown).toMatchObject({ event: 'order.created', delivery_id: 'dlv-1', ts: 1_800_000_000 });
  expect(masked).toMatchObject({
    order_id: data.order_id,
    display_number: '68341',
    source_channel: 'whatsapp',
    status: 'confirmed',
    created_at: '2026-11-21T12:00:00.000Z',
    items: [{ external_id: 'SKU-1', product_name: 'Pizza', quantity: 2, unit_price: 39.9, variations: [{ name: 'Large', price_modifier: 5 }], addons: [{ name: 'Olives', quantity: 1, price: 2 }] }],
    delivery: { type: 'delivery', freight_price: 7 },
    payment: { method: 'pix', status: 'paid', change_for: null },
    gift: true,
  });
  expect((masked as unknown as { store_id: string }).store_id).toBe(ORDER.store_id);
});

it('allows fields by their place in the order, not by their name: a status, an order id or a time inside metadata or an unknown field is masked, and free-form keys are too', () => {
  const phone = '+5511987654321';
  const data = {
    ...ORDER,
    status: 'confirmed',
    metadata: { status: `Ligar para Maria ${phone}`, 'Maria Silva 11 98765-4321': 'x', order_id: 'Maria', note_at: '2026-11-21T12:00:00Z', count: 2 },
    courier: { status: 'Maria is on the way', name: 'João' },
    items: [{ ...(ORDER as { items: object[] }).items[0], display_number: 'Maria' }],
  };
  const text = payloadForDisplay(JSON.stringify({ event: 'order.created', data }), false);
  for (const value of ['98765', '987654321', 'Maria', 'Silva', 'João']) expect(text).not.toContain(value);
  const shown = JSON.parse(text) as { data: { status: string; metadata: Record<string, unknown>; courier: Record<string, unknown>; items: Record<string, unknown>[] } };
  expect(shown.data.status).toBe('confirmed');
  expect(shown.data.metadata).toEqual({ [`${MASK}1`]: MASK, [`${MASK}2`]: MASK, [`${MASK}3`]: MASK, [`${MASK}4`]: MASK, [`${MASK}5`]: 2 });
  expect(shown.data.courier).toEqual({ [`${MASK}1`]: MASK, [`${MASK}2`]: MASK });
  expect(shown.data.items[0]!.display_number).toBe(MASK);
  // An order.status_changed's summary keeps its fields.
  const change = { order_id: 'o-1', display_number: '42', external_order_id: null, previous_status: 'confirmed', status: 'preparing', store_id: 's-1' };
  expect(JSON.parse(payloadForDisplay(JSON.stringify({ event: 'order.status_changed', delivery_id: 'd-1', ts: 1, data: change }), false))).toEqual({ event: 'order.status_changed', delivery_id: 'd-1', ts: 1, data: change });
});
