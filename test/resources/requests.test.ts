import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/index.ts';
import { API_KEY, ENTRY, HEALTH, ORDER, PHONE, empty, envelope, fakeService, json, makeClient } from '../support/fake-service.ts';

const V1 = 'https://platform.example.com/integration/v1';

describe('every request carries the key and the JSON headers', () => {
  it('GET /health: X-API-Key, Accept, User-Agent, no Content-Type, parsed answer', async () => {
    const service = fakeService(json(200, HEALTH));
    await expect(makeClient(service.fetch).health()).resolves.toEqual(HEALTH);
    const [request] = service.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url.href).toBe(`${V1}/health`);
    expect(request?.headers.get('x-api-key')).toBe(API_KEY);
    expect(request?.headers.get('authorization')).toBeNull();
    expect(request?.headers.get('accept')).toBe('application/json');
    expect(request?.headers.get('content-type')).toBeNull();
    expect(request?.headers.get('user-agent')).toMatch(new RegExp(`^integration-sdk/${VERSION.replaceAll('.', '\\.')} node/\\d+`));
  });

  it('a JSON body goes with Content-Type: application/json', async () => {
    const service = fakeService(json(201, { entry: ENTRY, balance: 50 }));
    await makeClient(service.fetch).loyalty.credit({ phone: PHONE, points: 50, idempotency_key: 'k-1' });
    expect(service.requests[0]?.headers.get('content-type')).toBe('application/json');
  });

  it('VERSION is the package.json version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});

describe('orders', () => {
  it('get encodes the id into the path', async () => {
    const service = fakeService(json(200, ORDER));
    await expect(makeClient(service.fetch).orders.get('a/b?c')).resolves.toEqual(ORDER);
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/orders/a%2Fb%3Fc');
    expect(service.requests[0]?.url.search).toBe('');
  });

  it('findByExternalId sends external_order_id and returns the order', async () => {
    const service = fakeService(json(200, ORDER));
    await expect(makeClient(service.fetch).orders.findByExternalId('MKT 1&x')).resolves.toEqual(ORDER);
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/orders');
    expect(service.requests[0]?.url.searchParams.get('external_order_id')).toBe('MKT 1&x');
  });

  it('findByExternalId is null on 404 NOT_FOUND, but a proxy 404 page still throws', async () => {
    await expect(makeClient(fakeService(envelope(404, 'NOT_FOUND')).fetch).orders.findByExternalId('x')).resolves.toBeNull();
    const proxy = fakeService(() => new Response('<html>Not Found</html>', { status: 404 }));
    await expect(makeClient(proxy.fetch).orders.findByExternalId('x')).rejects.toMatchObject({ code: 'HTTP_404' });
  });
});

describe('webhooks', () => {
  const created = { id: 'w1', url: 'https://erp.example.com/h', events: ['order.created'], secret: 'whsec_abc', warning: 'shown once', created_at: '2026-11-21T12:00:00.000Z' };
  const endpoint = { id: 'w1', url: 'https://erp.example.com/h', events: ['order.created'], consecutive_failures: 0, created_at: '2026-11-21T12:00:00.000Z' };
  const delivery = { id: 'd1', event: 'order.created', status: 'delivered', attempt_count: 1, response_status: 200, last_error: null, created_at: '2026-11-21T12:00:00.000Z', next_attempt_at: null };

  it('create POSTs { url, events }', async () => {
    const service = fakeService(json(200, { data: [] }), json(201, created));
    await expect(makeClient(service.fetch).webhooks.create({ url: created.url, events: ['order.created'] })).resolves.toEqual(created);
    // first the endpoints already there (to tell an orphan from them if the create fails), then the create
    expect(service.requests[0]).toMatchObject({ method: 'GET' });
    expect(service.requests[1]).toMatchObject({ method: 'POST', body: { url: created.url, events: ['order.created'] } });
    expect(service.requests[1]?.url.pathname).toBe('/integration/v1/webhooks');
  });

  it('list returns the data array', async () => {
    const service = fakeService(json(200, { data: [endpoint] }));
    await expect(makeClient(service.fetch).webhooks.list()).resolves.toEqual([endpoint]);
    expect(service.requests[0]).toMatchObject({ method: 'GET' });
  });

  it('delete sends DELETE and resolves on 204', async () => {
    const service = fakeService(empty(204));
    await expect(makeClient(service.fetch).webhooks.delete('w1')).resolves.toBeUndefined();
    expect(service.requests[0]?.method).toBe('DELETE');
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/webhooks/w1');
  });

  it('deliveries sends limit and returns the data array', async () => {
    const service = fakeService(json(200, { data: [delivery] }));
    await expect(makeClient(service.fetch).webhooks.deliveries('w1', { limit: 5 })).resolves.toEqual([delivery]);
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/webhooks/w1/deliveries');
    expect(service.requests[0]?.url.searchParams.get('limit')).toBe('5');
  });

  it('deliveries without limit sends no query', async () => {
    const service = fakeService(json(200, { data: [] }));
    await makeClient(service.fetch).webhooks.deliveries('w1');
    expect(service.requests[0]?.url.search).toBe('');
  });

  it('test POSTs to /webhooks/{id}/test', async () => {
    const service = fakeService(json(202, { delivery_id: 'd9' }));
    await expect(makeClient(service.fetch).webhooks.test('w1')).resolves.toEqual({ delivery_id: 'd9' });
    expect(service.requests[0]).toMatchObject({ method: 'POST', body: undefined });
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/webhooks/w1/test');
  });
});

describe('loyalty', () => {
  const customer = { id: 'c1', name: 'Ana', phone: '5511912345678', external_id: null };
  const program = { id: 'p1', name: 'Club', active: true, points_per_currency: 1, currency_per_point: 0.05 };

  it('program GETs /loyalty/program', async () => {
    const service = fakeService(json(200, program));
    await expect(makeClient(service.fetch).loyalty.program()).resolves.toEqual(program);
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/loyalty/program');
  });

  it('balance names the customer by phone or by external_id in the query', async () => {
    const balance = { customer, points: 120, program_id: 'p1' };
    const service = fakeService(json(200, balance));
    const client = makeClient(service.fetch);
    await expect(client.loyalty.balance({ phone: PHONE })).resolves.toEqual(balance);
    await client.loyalty.balance({ external_id: 'CUST-1' });
    expect(service.requests[0]?.url.searchParams.get('phone')).toBe(PHONE);
    expect([...service.requests[1]!.url.searchParams.keys()]).toEqual(['external_id']);
  });

  it('statement sends customer and limit', async () => {
    const statement = { customer, points: 70, entries: [ENTRY] };
    const service = fakeService(json(200, statement));
    await expect(makeClient(service.fetch).loyalty.statement({ external_id: 'CUST-1' }, { limit: 10 })).resolves.toEqual(statement);
    expect(Object.fromEntries(service.requests[0]!.url.searchParams)).toEqual({ external_id: 'CUST-1', limit: '10' });
  });

  it('credit POSTs /loyalty/points and returns the key it was given', async () => {
    const service = fakeService(json(201, { entry: ENTRY, balance: 170 }));
    const result = await makeClient(service.fetch).loyalty.credit({ phone: PHONE, points: 50, idempotency_key: 'order-9', order_id: 'o9' });
    expect(result).toEqual({ entry: ENTRY, balance: 170, idempotency_key: 'order-9' });
    expect(service.requests[0]).toMatchObject({ method: 'POST', body: { phone: PHONE, points: 50, idempotency_key: 'order-9', order_id: 'o9' } });
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/loyalty/points');
  });

  it('credit without a key makes one with randomUUID and returns it', async () => {
    const service = fakeService(json(201, { entry: ENTRY, balance: 170 }));
    const client = makeClient(service.fetch, { randomUUID: () => '6f1c2c9e-0000-4000-8000-000000000001' });
    const result = await client.loyalty.credit({ external_id: 'CUST-1', points: 5 });
    expect(result.idempotency_key).toBe('6f1c2c9e-0000-4000-8000-000000000001');
    expect(service.requests[0]?.body).toMatchObject({ idempotency_key: '6f1c2c9e-0000-4000-8000-000000000001' });
  });

  it('the default key is a UUID v4', async () => {
    const service = fakeService(json(201, { entry: ENTRY, balance: 1 }));
    const { idempotency_key } = await makeClient(service.fetch).loyalty.debit({ phone: PHONE, points: 1 });
    expect(idempotency_key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('debit POSTs /loyalty/points/debit', async () => {
    const service = fakeService(json(201, { entry: { ...ENTRY, type: 'debit' }, balance: 100 }));
    await makeClient(service.fetch).loyalty.debit({ phone: PHONE, points: 20, idempotency_key: 'd-1' });
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/loyalty/points/debit');
    expect(service.requests[0]?.body).toEqual({ phone: PHONE, points: 20, idempotency_key: 'd-1' });
  });

  it('validateCoupon POSTs the input as is', async () => {
    const validation = { valid: true, coupon: { code: 'WELCOME10', type: 'percent', value: 10, expires_at: null }, discount: 12 };
    const service = fakeService(json(200, validation));
    await expect(makeClient(service.fetch).loyalty.validateCoupon({ code: 'WELCOME10', phone: PHONE, order_total: 120 })).resolves.toEqual(validation);
    expect(service.requests[0]).toMatchObject({ method: 'POST', body: { code: 'WELCOME10', phone: PHONE, order_total: 120 } });
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/loyalty/coupons/validate');
  });

  it('redeemCoupon POSTs with an idempotency_key and returns it', async () => {
    const redemption = { id: 'r1', code: 'WELCOME10', discount: 12, created_at: '2026-11-21T12:00:00.000Z' };
    const service = fakeService(json(200, { redemption }));
    const client = makeClient(service.fetch, { randomUUID: () => 'made-key' });
    const result = await client.loyalty.redeemCoupon({ code: 'WELCOME10', phone: PHONE, store_id: 's1' });
    expect(result).toEqual({ redemption, idempotency_key: 'made-key' });
    expect(service.requests[0]?.body).toEqual({ code: 'WELCOME10', phone: PHONE, store_id: 's1', idempotency_key: 'made-key' });
    expect(service.requests[0]?.url.pathname).toBe('/integration/v1/loyalty/coupons/redeem');
  });
});

describe('client.request, the escape hatch', () => {
  it('resolves the path under /integration/v1 and returns parsed JSON', async () => {
    const service = fakeService(json(200, { anything: [1, 2] }));
    const client = makeClient(service.fetch);
    await expect(client.request({ method: 'GET', path: '/loyalty/program', query: { a: 1, b: undefined } })).resolves.toEqual({ anything: [1, 2] });
    await client.request({ method: 'GET', path: '/integration/v1/health' });
    await client.request({ method: 'POST', path: 'future/route', body: { x: 1 } });
    expect(service.requests.map((r) => r.url.href)).toEqual([`${V1}/loyalty/program?a=1`, `${V1}/health`, `${V1}/future/route`]);
    expect(service.requests[2]?.body).toEqual({ x: 1 });
  });

  it('returns undefined for an empty 204', async () => {
    await expect(makeClient(fakeService(empty(204)).fetch).request({ method: 'DELETE', path: '/webhooks/w1' })).resolves.toBeUndefined();
  });

  it('keeps a base path in front of /integration/v1', async () => {
    const service = fakeService(json(200, HEALTH));
    await makeClient(service.fetch, { baseUrl: 'https://gw.example.com/api/' }).health();
    expect(service.requests[0]?.url.href).toBe('https://gw.example.com/api/integration/v1/health');
  });
});
