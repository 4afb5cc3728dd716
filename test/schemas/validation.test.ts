import { describe, expect, it } from 'vitest';
import { InvalidInputError, IntegrationError, ResponseValidationError, type CustomerRef } from '../../src/index.ts';
import { HEALTH, ORDER, PHONE, fakeService, json, makeClient } from '../support/fake-service.ts';

describe('2xx answers are validated against their schema', () => {
  it('a missing field is a ResponseValidationError with its path, not retried', async () => {
    const { scopes: _dropped, ...withoutScopes } = HEALTH;
    const service = fakeService(json(200, withoutScopes));
    const error = await makeClient(service.fetch).health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues).toEqual([{ path: 'scopes', message: 'missing (expected array)' }]);
    expect(error).toMatchObject({ status: 200, requestMethod: 'GET', requestPath: '/integration/v1/health' });
    expect(service.requests).toHaveLength(1);
  });

  it('a nested wrong type names the full path and the expected type only', async () => {
    const broken = { ...ORDER, items: [{ ...ORDER.items[0], quantity: 'two' }] };
    const error = (await makeClient(fakeService(json(200, broken)).fetch).orders.get('o').catch((e: unknown) => e)) as ResponseValidationError;
    expect(error.issues).toEqual([{ path: 'items.0.quantity', message: 'expected number' }]);
    expect(error.message).not.toContain('two');
  });

  it('a body that is not JSON is a ResponseValidationError', async () => {
    const error = await makeClient(fakeService(() => new Response('<html>', { status: 200 })).fetch).health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
  });

  it('unknown fields are kept, unknown enum values accepted', async () => {
    const future = { ...ORDER, source_channel: 'drone', status: 'teleported', loyalty_points: 12, payment: { ...ORDER.payment, method: 'crypto', installments: 3 } };
    const order = await makeClient(fakeService(json(200, future)).fetch).orders.get('o');
    expect(order).toEqual(future);
    expect((order as Record<string, unknown>).loyalty_points).toBe(12);
  });
});

describe('arguments that are certainly wrong are refused before sending', () => {
  const wrong: [string, (client: ReturnType<typeof makeClient>) => Promise<unknown>, string][] = [
    ['points 0', (c) => c.loyalty.credit({ phone: PHONE, points: 0 }), 'points'],
    ['points 1.5', (c) => c.loyalty.credit({ phone: PHONE, points: 1.5 }), 'points'],
    ['points as a string', (c) => c.loyalty.debit({ phone: PHONE, points: '5' as never }), 'points'],
    ['both phone and external_id', (c) => c.loyalty.credit({ phone: PHONE, external_id: 'C1', points: 1 } as never), 'customer'],
    ['neither phone nor external_id', (c) => c.loyalty.balance({} as CustomerRef), 'customer'],
    ['an empty phone', (c) => c.loyalty.balance({ phone: '' }), 'phone'],
    ['an empty idempotency_key', (c) => c.loyalty.credit({ phone: PHONE, points: 1, idempotency_key: '' }), 'idempotency_key'],
    ['a 256-character idempotency_key', (c) => c.loyalty.redeemCoupon({ code: 'C', phone: PHONE, store_id: 's', idempotency_key: 'k'.repeat(256) }), 'idempotency_key'],
    ['a redemption without store_id', (c) => c.loyalty.redeemCoupon({ code: 'C', phone: PHONE } as never), 'store_id'],
    ['a coupon without code', (c) => c.loyalty.validateCoupon({ code: '' }), 'code'],
    ['statement limit 0', (c) => c.loyalty.statement({ phone: PHONE }, { limit: 0 }), 'limit'],
    ['deliveries limit 101', (c) => c.webhooks.deliveries('w1', { limit: 101 }), 'limit'],
    ['an empty order id', (c) => c.orders.get(''), 'orderId'],
    ['webhook without events', (c) => c.webhooks.create({ url: 'https://x.example', events: [] }), 'events'],
    ['request with an absolute URL', (c) => c.request({ method: 'GET', path: 'https://evil.example/steal' }), 'path'],
    ['request with an unknown method', (c) => c.request({ method: 'TRACE' as never, path: '/health' }), 'method'],
    ['a negative per-call timeout', (c) => c.health({ timeoutMs: -1 }), 'timeoutMs'],
  ];
  it.each(wrong)('%s', async (_name, call, path) => {
    const service = fakeService(json(200, {}));
    const error = await call(makeClient(service.fetch)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toBeInstanceOf(IntegrationError);
    expect((error as InvalidInputError).issues.map((issue) => issue.path)).toContain(path);
    expect(service.requests).toHaveLength(0);
  });

  it('the message never echoes the value', async () => {
    const error = (await makeClient(fakeService(json(200, {})).fetch).loyalty.credit({ phone: PHONE, external_id: 'C1', points: 1 } as never).catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('91234');
    expect(JSON.stringify(error)).not.toContain('91234');
  });
});
