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
