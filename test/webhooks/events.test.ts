import { describe, expect, expectTypeOf, test } from 'vitest';
import {
  createWebhookHandler,
  verifyWebhook,
  verifyWebhookAsync,
  type KnownWebhookEvent,
  type Order,
  type OrderStatusChange,
  type WebhookEvent,
  type WebhookTestEvent,
  type UnknownWebhookEvent,
} from 'integration-sdk/webhooks';
import { NOW, ORDER, ORDER_CREATED, SECRET, STATUS_CHANGED, UNKNOWN_EVENT, VERIFIERS, delivery, outcome } from './support/deliveries.ts';

describe.each(VERIFIERS)('typed events with %s', (_name, verify) => {
  const verified = async (payload = ORDER_CREATED) => {
    const { body, headers } = delivery(payload);
    return (await verify(body, headers, SECRET, { now: NOW })) as WebhookEvent;
  };

  test('order.created carries the full order, unknown fields kept', async () => {
    const event = await verified({ event: 'order.created', data: { ...ORDER, loyalty_points: 12 } });
    expect(event.event).toBe('order.created');
    expect(event.data).toEqual({ ...ORDER, loyalty_points: 12 });
  });

  test('order.status_changed carries the summary; new status values are accepted', async () => {
    const event = await verified({ event: 'order.status_changed', data: { ...(STATUS_CHANGED.data as object), status: 'refunded' } });
    expect(event).toMatchObject({ event: 'order.status_changed', data: { previous_status: 'confirmed', status: 'refunded' } });
  });

  test('an unknown event is returned, never an error, with data untouched', async () => {
    const event = await verified(UNKNOWN_EVENT);
    expect(event.event).toBe('stock.changed');
    expect(event.data).toEqual(UNKNOWN_EVENT.data);
  });

  test('a known event whose data lacks fields is invalid_payload, naming paths and never values', async () => {
    const { customer, ...withoutCustomer } = ORDER as { customer: { phone: string } };
    const broken = { ...withoutCustomer, items: [{ external_id: 'SKU-1', quantity: 'two' }] };
    const { body, headers } = delivery({ event: 'order.created', data: broken });
    const result = await outcome(() => verify(body, headers, SECRET, { now: NOW }));
    const error = result.error as Error & { reason: string };
    expect(error.reason).toBe('invalid_payload');
    expect(error.message).toContain('data.customer: expected object');
    expect(error.message).toContain('data.items.0.quantity: expected number');
    expect(error.message).not.toContain('two');
    expect(error.message).not.toContain(customer.phone);
    expect(error.message).not.toContain('SKU-1');
  });
});

test('WebhookEvent narrows on `event`', () => {
  const event = { event: 'catalog.product_updated' } as unknown as WebhookEvent;
  if (event.event === 'order.created') {
    expectTypeOf(event.data).toEqualTypeOf<Order>();
    expectTypeOf(event.data.customer.phone).toBeString();
  } else if (event.event === 'order.status_changed') {
    expectTypeOf(event.data).toEqualTypeOf<OrderStatusChange>();
  } else if (event.event === 'webhook.test') {
    expectTypeOf(event).toEqualTypeOf<WebhookTestEvent>();
    expectTypeOf(event.data.message).toBeString();
  } else {
    expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>();
    expectTypeOf(event.data).toBeUnknown();
    const name: string = event.event;
    expectTypeOf(name).toBeString();
    // A name this SDK version does not list is compared as a plain string (or the SDK upgraded).
    // @ts-expect-error the unknown variant's name type matches no literal, which is what makes narrowing work
    expect(event.event === 'stock.changed').toBe(false);
    expect(String(event.event) === 'stock.changed').toBe(false);
  }
  switch (event.event) {
    case 'order.created':
      expectTypeOf(event.data.items[0]!.line_total).toBeNumber();
      break;
    default:
  }
});

test('the verifiers and the handler carry the event types', () => {
  expectTypeOf(verifyWebhook).returns.toEqualTypeOf<WebhookEvent>();
  expectTypeOf(verifyWebhookAsync).returns.toEqualTypeOf<Promise<WebhookEvent>>();
  expectTypeOf<Parameters<typeof createWebhookHandler>[0]['onEvent']>().parameter(0).toEqualTypeOf<KnownWebhookEvent>();
  // A callback written for every event still fits.
  createWebhookHandler({ secret: SECRET, onEvent: (_event: WebhookEvent) => undefined });
});
