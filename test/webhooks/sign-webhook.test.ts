import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { ConfigurationError } from '../../src/errors/integration-error.ts';
import { InvalidInputError } from '../../src/errors/invalid-input-error.ts';
import { signWebhook } from 'integration-sdk/webhooks';
import { NOW, NOW_SECONDS, ORDER_CREATED, SECRET, VERIFIERS } from './support/deliveries.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('signWebhook', () => {
  test('builds the body and headers the service sends (spec 6.1)', () => {
    const { body, headers } = signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: NOW_SECONDS, deliveryId: 'd-1' });
    expect(Object.keys(JSON.parse(body))).toEqual(['event', 'delivery_id', 'ts', 'data']);
    expect(JSON.parse(body)).toEqual({ event: 'order.created', delivery_id: 'd-1', ts: NOW_SECONDS, data: ORDER_CREATED.data });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-Service-Event': 'order.created',
      'X-Service-Delivery-Id': 'd-1',
      'X-Service-Timestamp': String(NOW_SECONDS),
      'X-Service-Signature-256': `sha256=${createHmac('sha256', SECRET).update(`${NOW_SECONDS}.${body}`).digest('hex')}`,
    });
  });

  test('defaults the delivery id to a fresh UUID and the timestamp to now', () => {
    const before = Math.floor(Date.now() / 1000);
    const first = signWebhook({ payload: ORDER_CREATED, secret: SECRET });
    const second = signWebhook({ payload: ORDER_CREATED, secret: SECRET });
    const after = Math.floor(Date.now() / 1000);
    expect(first.headers['X-Service-Delivery-Id']).toMatch(UUID_V4);
    expect(first.headers['X-Service-Delivery-Id']).not.toBe(second.headers['X-Service-Delivery-Id']);
    expect(JSON.parse(first.body).delivery_id).toBe(first.headers['X-Service-Delivery-Id']);
    const ts = Number(first.headers['X-Service-Timestamp']);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(after);
    expect(JSON.parse(first.body).ts).toBe(ts);
  });

  test('takes the timestamp as a Date or as integer epoch seconds', () => {
    const fromDate = signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: new Date(NOW_SECONDS * 1000 + 750), deliveryId: 'd' });
    expect(fromDate.headers['X-Service-Timestamp']).toBe(String(NOW_SECONDS));
    expect(fromDate).toEqual(signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: NOW_SECONDS, deliveryId: 'd' }));
  });

  test('refuses milliseconds, fractions and bad dates instead of signing an unverifiable delivery', () => {
    expect(() => signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: NOW_SECONDS * 1000 })).toThrow(/looks like milliseconds/);
    expect(() => signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: 1.5 })).toThrow(ConfigurationError);
    expect(() => signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: new Date(Number.NaN) })).toThrow(ConfigurationError);
    expect(() => signWebhook({ payload: ORDER_CREATED, secret: '' })).toThrow(/secret is empty/);
  });

  test.each(VERIFIERS)('its output verifies with %s', async (_name, verify) => {
    const { body, headers } = signWebhook({ payload: ORDER_CREATED, secret: SECRET, timestamp: NOW });
    const event = await verify(body, headers, SECRET, { now: NOW });
    expect(event).toMatchObject({ event: 'order.created', delivery_id: headers['X-Service-Delivery-Id'], ts: NOW_SECONDS });
  });

  test('a missing payload, a payload JSON cannot hold, or an event name with CR/LF is an InvalidInputError', () => {
    const sign = (payload: unknown) => () => signWebhook({ payload: payload as never, secret: SECRET, timestamp: NOW_SECONDS });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(sign(undefined)).toThrow(InvalidInputError);
    expect(sign(null)).toThrow(/payload/);
    expect(sign({ event: 'order.created', data: { total: 10n } })).toThrow(InvalidInputError);
    expect(sign({ event: 'order.created', data: cycle })).toThrow(InvalidInputError);
    expect(sign({ event: 'order.created\r\nX-Injected: 1', data: {} })).toThrow(InvalidInputError);
    expect(sign({ event: 42, data: {} })).toThrow(/event/);
  });

  test('a payload without data (or with data JSON would leave out) is an InvalidInputError', () => {
    const sign = (payload: unknown) => () => signWebhook({ payload: payload as never, secret: SECRET, timestamp: NOW_SECONDS });
    expect(sign({ event: 'order.created' })).toThrow(/payload\.data/);
    expect(sign({ event: 'order.created', data: undefined })).toThrow(InvalidInputError);
    expect(sign({ event: 'order.created', data: () => ({}) })).toThrow(InvalidInputError);
    expect(sign({ event: 'order.created', data: Symbol('x') })).toThrow(InvalidInputError);
  });

  test('a delivery id with CR/LF is refused too: it is copied into a header as well', () => {
    expect(() => signWebhook({ payload: ORDER_CREATED, secret: SECRET, deliveryId: 'd-1\nX-Injected: 1' })).toThrow(InvalidInputError);
  });
});
