import { inspect } from 'node:util';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as root from 'integration-sdk';
import * as hooks from 'integration-sdk/webhooks';
import * as sandboxEntry from 'integration-sdk/sandbox';
import { ConfigurationError, IntegrationClient, IntegrationError } from 'integration-sdk';
import { API, BASE, CREATED_WEBHOOK, CUSTOMER, ENTRY, HEALTH, KEY, KEY_SECRET, ORDER, STORE, ok, service } from './helpers.ts';

const ERROR_CLASSES = [
  'IntegrationError', 'ConfigurationError', 'ApiError', 'AuthenticationError', 'InsufficientScopeError', 'ForbiddenStoreError',
  'ValidationError', 'NotFoundError', 'CustomerNotFoundError', 'NoProgramError', 'CouponInvalidError', 'InsufficientBalanceError',
  'UnmappedItemsError', 'SsrfBlockedError', 'WebhookLimitReachedError', 'ConflictError', 'RateLimitError', 'FeatureDisabledError',
  'AuthUnavailableError', 'ServiceUnavailableError', 'InternalServerError', 'ConnectionError', 'TimeoutError',
  'ResponseValidationError', 'BulkOperationError', 'WebhookVerificationError',
] as const;

describe('entries', () => {
  it('integration-sdk exports the client, every error class and the webhook helpers', () => {
    expect(typeof root.IntegrationClient).toBe('function');
    for (const name of ERROR_CLASSES) {
      const Class = (root as Record<string, unknown>)[name] as new (...args: never[]) => unknown;
      expect(typeof Class, name).toBe('function');
      expect(Class.prototype instanceof Error || Class === (root.IntegrationError as unknown), name).toBe(true);
      if (name !== 'IntegrationError') expect(Class.prototype, name).toBeInstanceOf(root.IntegrationError);
    }
    for (const name of ['verifyWebhook', 'verifyWebhookAsync', 'signWebhook', 'createWebhookHandler'] as const) {
      expect(root[name], name).toBe(hooks[name]);
    }
  });

  it('integration-sdk/webhooks exports exactly its helpers, sharing the error class', () => {
    for (const name of ['verifyWebhook', 'verifyWebhookAsync', 'signWebhook', 'createWebhookHandler', 'WebhookVerificationError'] as const) {
      expect(typeof hooks[name], name).toBe('function');
    }
    expect(hooks.WebhookVerificationError).toBe(root.WebhookVerificationError);
    expect(new hooks.WebhookVerificationError('missing_header', 'x')).toBeInstanceOf(root.IntegrationError);
  });

  it('integration-sdk/sandbox exports createSandbox', () => {
    expect(typeof sandboxEntry.createSandbox).toBe('function');
  });

  it('class hierarchy as the surface document fixes it', () => {
    expect(root.CustomerNotFoundError.prototype).toBeInstanceOf(root.NotFoundError);
    expect(root.NoProgramError.prototype).toBeInstanceOf(root.NotFoundError);
    for (const name of ERROR_CLASSES.slice(3, 21)) {
      expect((root as any)[name].prototype, name).toBeInstanceOf(root.ApiError);
    }
    expect(root.TimeoutError.prototype instanceof root.IntegrationError).toBe(true);
  });
});

describe('constructor: ConfigurationError', () => {
  const cases: [string, unknown][] = [
    ['missing key', { baseUrl: BASE }],
    ['empty key', { apiKey: '', baseUrl: BASE }],
    ['trailing newline', { apiKey: `${KEY}\n`, baseUrl: BASE }],
    ['inner space', { apiKey: 'service_k7Conf_Super Secret', baseUrl: BASE }],
    ['leading space', { apiKey: ` ${KEY}`, baseUrl: BASE }],
    ['secret alone', { apiKey: KEY_SECRET, baseUrl: BASE }],
    ['Bearer prefix', { apiKey: `Bearer ${KEY}`, baseUrl: BASE }],
    ['no secret part', { apiKey: 'service_k7Conf', baseUrl: BASE }],
    ['no secret after id', { apiKey: 'service_k7Conf_', baseUrl: BASE }],
    ['non-ASCII character', { apiKey: 'service_k7Conf_SuperSecretPart123\u00e9', baseUrl: BASE }],
    ['control character', { apiKey: 'service_k7Conf_SuperSecretPart123\u0000', baseUrl: BASE }],
    ['not a string', { apiKey: 42, baseUrl: BASE }],
    ['missing baseUrl', { apiKey: KEY }],
    ['empty baseUrl', { apiKey: KEY, baseUrl: '' }],
    ['relative baseUrl', { apiKey: KEY, baseUrl: 'platform.example.com' }],
    ['garbage baseUrl', { apiKey: KEY, baseUrl: 'not a url' }],
    ['ftp baseUrl', { apiKey: KEY, baseUrl: 'ftp://platform.example.com' }],
    ['http non-loopback', { apiKey: KEY, baseUrl: 'http://platform.example.com' }],
    ['http private ip', { apiKey: KEY, baseUrl: 'http://10.0.0.5:8080' }],
  ];
  it.each(cases)('%s', (_name, options) => {
    let thrown: unknown;
    try {
      new IntegrationClient(options as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect(thrown).toBeInstanceOf(IntegrationError);
    const message = (thrown as Error).message;
    expect(message.length).toBeGreaterThan(0);
    expect(message).not.toContain(KEY_SECRET);
    expect(message).not.toContain('k7Conf');
    expect(JSON.stringify(thrown)).not.toContain(KEY_SECRET);
    expect(inspect(thrown)).not.toContain(KEY_SECRET);
  });

  it('names the whitespace rule', () => {
    expect(() => new IntegrationClient({ apiKey: `${KEY}\n`, baseUrl: BASE })).toThrow(/whitespace/i);
  });

  it.each(['http://localhost:8787', 'http://127.0.0.1:8787', 'http://[::1]:8787', 'https://platform.example.com'])('accepts %s', (baseUrl) => {
    expect(() => new IntegrationClient({ apiKey: KEY, baseUrl })).not.toThrow();
  });

  it('never holds the key where it can be seen', () => {
    const client = new IntegrationClient({ apiKey: KEY, baseUrl: BASE });
    expect(JSON.stringify(client)).not.toContain(KEY_SECRET);
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(KEY_SECRET);
    expect(Object.values(client).map(String).join()).not.toContain(KEY_SECRET);
  });
});

describe('base URL', () => {
  it.each([
    [BASE, `${API}/health`],
    [`${BASE}/`, `${API}/health`],
    [`${BASE}/integration/v1`, `${API}/health`],
    [`${BASE}/integration/v1/`, `${API}/health`],
    ['https://gw.example.com/api', 'https://gw.example.com/api/integration/v1/health'],
  ])('%s → %s', async (baseUrl, expected) => {
    const { fetch, calls } = service(ok(HEALTH));
    await new IntegrationClient({ apiKey: KEY, baseUrl, fetch }).health();
    expect(calls[0]!.url.href).toBe(expected);
  });
});

describe('headers (through msw and the global fetch)', () => {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());

  it('GET carries X-API-Key, Accept, User-Agent; no Authorization', async () => {
    let headers: Headers | undefined;
    server.use(http.get(`${API}/health`, ({ request }) => ((headers = request.headers), HttpResponse.json(HEALTH))));
    await expect(new IntegrationClient({ apiKey: KEY, baseUrl: BASE }).health()).resolves.toEqual(HEALTH);
    expect(headers!.get('x-api-key')).toBe(KEY);
    expect(headers!.get('accept')).toBe('application/json');
    expect(headers!.get('user-agent')).toMatch(/integration-sdk\/\d+\.\d+\.\d+/);
    expect(headers!.get('authorization')).toBeNull();
  });

  it('a JSON body carries Content-Type: application/json', async () => {
    let headers: Headers | undefined;
    let body: unknown;
    server.use(
      http.get(`${API}/webhooks`, () => HttpResponse.json({ data: [] })),
      http.post(`${API}/webhooks`, async ({ request }) => {
        headers = request.headers;
        body = await request.json();
        return HttpResponse.json(CREATED_WEBHOOK, { status: 201 });
      }),
    );
    const created = await new IntegrationClient({ apiKey: KEY, baseUrl: BASE }).webhooks.create({ url: CREATED_WEBHOOK.url, events: ['order.created'] });
    expect(created).toEqual(CREATED_WEBHOOK);
    expect(headers!.get('content-type')).toMatch(/^application\/json/);
    expect(headers!.get('x-api-key')).toBe(KEY);
    expect(body).toEqual({ url: CREATED_WEBHOOK.url, events: ['order.created'] });
  });
});

describe('routes', () => {
  function client(answer: Parameters<typeof service>[0]) {
    const s = service(answer);
    return { client: new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch: s.fetch }), calls: s.calls };
  }

  it('health', async () => {
    const { client: c, calls } = client(ok(HEALTH));
    expect(await c.health()).toEqual(HEALTH);
    expect(calls[0]).toMatchObject({ method: 'GET', text: '' });
    expect(calls[0]!.url.pathname).toBe('/integration/v1/health');
  });

  it('orders.get and findByExternalId', async () => {
    const { client: c, calls } = client(ok({ ...ORDER, updated_at: '2025-01-01T13:00:00.000Z' }));
    const order = await c.orders.get(ORDER.order_id);
    expect(order.order_id).toBe(ORDER.order_id);
    expect(calls[0]!.method).toBe('GET');
    expect(calls[0]!.url.pathname).toBe(`/integration/v1/orders/${ORDER.order_id}`);
    const found = await c.orders.findByExternalId('MKT-77');
    expect(found?.display_number).toBe('#1042');
    expect(calls[1]!.url.pathname).toBe('/integration/v1/orders');
    expect(calls[1]!.url.searchParams.get('external_order_id')).toBe('MKT-77');
  });

  it('findByExternalId is null on 404, orders.get throws NotFoundError', async () => {
    const notFound = () => Response.json({ error: { code: 'NOT_FOUND', message: 'no such order' } }, { status: 404 });
    const { client: c } = client(notFound);
    await expect(c.orders.findByExternalId('MKT-1')).resolves.toBeNull();
    await expect(c.orders.get(ORDER.order_id)).rejects.toBeInstanceOf(root.NotFoundError);
  });

  it('webhooks: create, list, delete, deliveries, test', async () => {
    const endpoint = { id: CREATED_WEBHOOK.id, url: CREATED_WEBHOOK.url, events: ['order.created'], consecutive_failures: 0, created_at: CREATED_WEBHOOK.created_at };
    const delivery = { id: 'd1', event: 'order.created', status: 'delivered', attempt_count: 1, response_status: 200, last_error: null, created_at: 'x', next_attempt_at: null };
    const { client: c, calls } = client((seen) => {
      const path = seen.url.pathname.replace('/integration/v1', '');
      if (seen.method === 'POST' && path === '/webhooks') return Response.json(CREATED_WEBHOOK, { status: 201 });
      if (seen.method === 'GET' && path === '/webhooks') return Response.json({ data: [endpoint] });
      if (seen.method === 'DELETE') return new Response(null, { status: 204 });
      if (path.endsWith('/deliveries')) return Response.json({ data: [delivery] });
      if (path.endsWith('/test')) return Response.json({ delivery_id: 'd2' }, { status: 202 });
      return new Response(null, { status: 500 });
    });
    expect(await c.webhooks.create({ url: CREATED_WEBHOOK.url, events: ['order.created', 'order.status_changed'] })).toEqual(CREATED_WEBHOOK);
    expect(calls[0]).toMatchObject({ method: 'GET' }); // the endpoints already there, to recognise an orphan
    expect(calls[1]!.body).toEqual({ url: CREATED_WEBHOOK.url, events: ['order.created', 'order.status_changed'] });
    expect(await c.webhooks.list()).toEqual([endpoint]);
    await expect(c.webhooks.delete(endpoint.id)).resolves.toBeUndefined();
    expect(calls[3]).toMatchObject({ method: 'DELETE' });
    expect(calls[3]!.url.pathname).toBe(`/integration/v1/webhooks/${endpoint.id}`);
    expect(await c.webhooks.deliveries(endpoint.id, { limit: 5 })).toEqual([delivery]);
    expect(calls[4]!.url.pathname).toBe(`/integration/v1/webhooks/${endpoint.id}/deliveries`);
    expect(calls[4]!.url.searchParams.get('limit')).toBe('5');
    await c.webhooks.deliveries(endpoint.id);
    expect(calls[5]!.url.searchParams.has('limit')).toBe(false);
    expect(await c.webhooks.test(endpoint.id)).toEqual({ delivery_id: 'd2' });
    expect(calls[6]).toMatchObject({ method: 'POST' });
    expect(calls[6]!.url.pathname).toBe(`/integration/v1/webhooks/${endpoint.id}/test`);
  });

  it('loyalty reads', async () => {
    const program = { id: 'p1', name: 'Club', active: true, points_per_currency: 1, currency_per_point: 0.05 };
    const balance = { customer: CUSTOMER, points: 120, program_id: 'p1' };
    const statement = { customer: CUSTOMER, points: 120, entries: [ENTRY] };
    const { client: c, calls } = client((seen) => {
      const path = seen.url.pathname;
      return Response.json(path.endsWith('/program') ? program : path.endsWith('/balance') ? balance : statement);
    });
    expect(await c.loyalty.program()).toEqual(program);
    expect(calls[0]!.url.pathname).toBe('/integration/v1/loyalty/program');
    expect(await c.loyalty.balance({ phone: '+55 11 91234-5678' })).toEqual(balance);
    expect(calls[1]!.url.pathname).toBe('/integration/v1/loyalty/balance');
    expect(calls[1]!.url.searchParams.get('phone')).toBe('+55 11 91234-5678');
    await c.loyalty.balance({ external_id: 'CUST-1' });
    expect(calls[2]!.url.searchParams.get('external_id')).toBe('CUST-1');
    expect(calls[2]!.url.searchParams.has('phone')).toBe(false);
    expect(await c.loyalty.statement({ phone: '11912345678' }, { limit: 10 })).toEqual(statement);
    expect(calls[3]!.url.pathname).toBe('/integration/v1/loyalty/statement');
    expect(calls[3]!.url.searchParams.get('limit')).toBe('10');
    expect(calls[3]!.url.searchParams.get('phone')).toBe('11912345678');
    expect(calls.every((call) => call.method === 'GET')).toBe(true);
  });

  it('loyalty writes: routes, bodies, idempotency_key made and returned', async () => {
    const { client: c, calls } = client((seen) => {
      const path = seen.url.pathname;
      if (path.endsWith('/validate')) return Response.json({ valid: true, coupon: { code: 'X', type: 'percent', value: 10, expires_at: null }, discount: 5 });
      if (path.endsWith('/redeem')) return Response.json({ redemption: { id: 'r1', code: 'X', discount: 5, created_at: 'x' } });
      return Response.json({ entry: ENTRY, balance: 130 }, { status: 201 });
    });
    const credited = await c.loyalty.credit({ phone: '11912345678', points: 10 });
    expect(calls[0]).toMatchObject({ method: 'POST' });
    expect(calls[0]!.url.pathname).toBe('/integration/v1/loyalty/points');
    expect(calls[0]!.body).toMatchObject({ phone: '11912345678', points: 10 });
    expect(calls[0]!.body.idempotency_key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(credited).toEqual({ entry: ENTRY, balance: 130, idempotency_key: calls[0]!.body.idempotency_key });

    const debited = await c.loyalty.debit({ external_id: 'CUST-1', points: 5, idempotency_key: 'mine-1' });
    expect(calls[1]!.url.pathname).toBe('/integration/v1/loyalty/points/debit');
    expect(calls[1]!.body).toEqual({ external_id: 'CUST-1', points: 5, idempotency_key: 'mine-1' });
    expect(debited.idempotency_key).toBe('mine-1');

    const validation = await c.loyalty.validateCoupon({ code: 'X', phone: '11912345678', order_total: 50 });
    expect(validation.discount).toBe(5);
    expect(calls[2]!.url.pathname).toBe('/integration/v1/loyalty/coupons/validate');
    expect(calls[2]!.body).toEqual({ code: 'X', phone: '11912345678', order_total: 50 });

    const redeemed = await c.loyalty.redeemCoupon({ code: 'X', phone: '11912345678', store_id: STORE });
    expect(calls[3]!.url.pathname).toBe('/integration/v1/loyalty/coupons/redeem');
    expect(calls[3]!.body).toMatchObject({ code: 'X', phone: '11912345678', store_id: STORE });
    expect(redeemed.idempotency_key).toBe(calls[3]!.body.idempotency_key);
    expect(redeemed.redemption.id).toBe('r1');
  });

  it('client.request: relative path, prefix kept as is, query and body', async () => {
    const { client: c, calls } = client(ok({ any: 1 }));
    expect(await c.request({ method: 'GET', path: '/health' })).toEqual({ any: 1 });
    expect(calls[0]!.url.href).toBe(`${API}/health`);
    await c.request({ method: 'GET', path: '/integration/v1/health' });
    expect(calls[1]!.url.href).toBe(`${API}/health`);
    await c.request({ method: 'POST', path: '/x/y', query: { a: 1 }, body: { b: 2 } });
    expect(calls[2]).toMatchObject({ method: 'POST', body: { b: 2 } });
    expect(calls[2]!.url.href).toBe(`${API}/x/y?a=1`);
    expect(calls[2]!.headers.get('x-api-key')).toBe(KEY);
  });

  it('responses are read tolerantly: unknown fields kept, unknown enum values accepted', async () => {
    const { client: c } = client(ok({ ...ORDER, source_channel: 'ifood-like', status: 'teleported', brand_new_field: { x: 1 }, payment: { ...ORDER.payment, method: 'crypto' } }));
    const order = await c.orders.get(ORDER.order_id);
    expect(order.source_channel).toBe('ifood-like');
    expect(order.status).toBe('teleported');
    expect((order as Record<string, unknown>).brand_new_field).toEqual({ x: 1 });
  });

  it('a missing required field is a ResponseValidationError naming the path, not the value', async () => {
    const { customer, ...rest } = ORDER;
    const { client: c } = client(ok({ ...rest, customer: { ...customer, phone: 42 } }));
    const error = await c.orders.get(ORDER.order_id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(root.ResponseValidationError);
    expect(JSON.stringify((error as root.ResponseValidationError).issues)).toContain('customer');
    expect((error as Error).message).not.toContain('Maria');
    const { client: c2 } = client(ok({ status: 'ok' }));
    await expect(c2.health()).rejects.toBeInstanceOf(root.ResponseValidationError);
  });
});
