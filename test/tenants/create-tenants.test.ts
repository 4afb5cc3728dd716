// The tenants registry against the sandbox with many merchants, on real SQLite files: connect,
// client, a revoked key stopping after one 401 in every process sharing the store, updateKey,
// disconnect, and what never shows a key or a secret.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AuthenticationError, BulkOperationError, ConfigurationError, InvalidInputError, TenantKeyInvalidError as MainTenantKeyInvalidError } from 'integration-sdk';
import { TenantConnectError, TenantKeyInvalidError, TenantNotFoundError } from 'integration-sdk/tenants';
import { verifyWebhook } from 'integration-sdk/webhooks';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { ManualClock, rejectionOf } from '../e2e/helpers.ts';
import { requestsOf, startWorld } from './support/fixture.ts';

describe('connect', () => {
  it('records the merchant, stores and scopes, registers one endpoint at webhookUrl(id), keeps its secret sealed, and sends webhooks.test', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const apiKey = merchant.keys[0]!.apiKey;
    const tenant = await tenants.connect('loja-42', { apiKey });
    expect(tenant).toEqual({
      id: 'loja-42',
      merchantId: merchant.merchantId,
      storeIds: [],
      scopes: expect.arrayContaining(['webhooks:manage', 'orders:read']),
      missingScopes: [],
      endpointId: expect.any(String),
      status: 'active',
      connectedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      keyInvalidAt: null,
      disconnectedAt: null,
    });
    // (webhooks.create lists the endpoints once more itself, to clean up after an ambiguous failure)
    expect(requestsOf(world.proxy, apiKey)).toEqual(['GET /health', 'GET /webhooks', 'GET /webhooks', 'POST /webhooks', `POST /webhooks/${tenant.endpointId}/test`]);
    const endpoints = (await tenants.client('loja-42').webhooks.list()).filter((endpoint) => endpoint.url === world.webhookUrl('loja-42'));
    expect(endpoints.map((endpoint) => endpoint.id)).toEqual([tenant.endpointId]);

    // The secret kept is the endpoint's: the test delivery verifies with it.
    const secrets = await tenantsInternals(tenants)!.secretsFor('loja-42');
    expect(secrets).toEqual([{ endpointId: tenant.endpointId, secret: expect.stringMatching(/^whsec_/), createdAt: expect.any(Number) }]);
    const [delivery] = world.sandbox.deliveries({ webhookId: tenant.endpointId! });
    expect(delivery?.event).toBe('webhook.test');
    await world.sandbox.idle();
    expect(world.sandbox.deliveries({ webhookId: tenant.endpointId! })[0]?.status).toBe('delivered');
    expect(() => verifyWebhook('{}', {}, secrets![0]!.secret)).toThrow(); // a real secret string, usable by the verifier

    // A second connect reuses its endpoint: still one at the URL, no second registration.
    const again = await tenants.connect('loja-42', { apiKey });
    expect(again.endpointId).toBe(tenant.endpointId);
    expect(again.connectedAt).toBe(tenant.connectedAt);
    expect(requestsOf(world.proxy, apiKey).filter((request) => request === 'POST /webhooks')).toHaveLength(1);
  });

  it('two connects of one id at once in one process register one endpoint', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const [one, two] = await Promise.all([tenants.connect('loja-1', { apiKey }), tenants.connect('loja-1', { apiKey })]);
    expect(one.endpointId).toBe(two.endpointId);
    expect(requestsOf(world.proxy, apiKey).filter((request) => request === 'POST /webhooks')).toHaveLength(1);
  });

  it('refuses bad input with a typed error naming the rule, before any request and writing nothing', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const cases: Array<[string, unknown, RegExp]> = [
      ['loja/42', apiKey, /tenantId: contains "\/"/],
      ['', apiKey, /tenantId: is empty/],
      ['..', apiKey, /tenantId: is "\." or "\.\."/],
      ['loja 42', apiKey, /tenantId: contains whitespace/],
      ['x'.repeat(129), apiKey, /longer than 128/],
      ['loja-42', `${apiKey}\n`, /apiKey: contains whitespace/],
      ['loja-42', apiKey.replace('service_', 'Bearer '), /apiKey: contains whitespace|does not start with "service_"/],
      ['loja-42', 'service_only', /apiKey: is not of the form/],
      ['loja-42', undefined, /apiKey: is missing/],
    ];
    for (const [id, key, message] of cases) {
      const error = await rejectionOf(tenants.connect(id, { apiKey: key as string }));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain(apiKey.split('_')[2]!);
    }
    expect(world.proxy.requests).toEqual([]);
    const unknown = await rejectionOf(tenants.updateKey('nobody', apiKey));
    expect(unknown).toBeInstanceOf(TenantNotFoundError);
    expect(unknown).toMatchObject({ tenantId: 'nobody', reason: 'unknown' });
    expect(await rejectionOf(tenants.disconnect('nobody'))).toBeInstanceOf(TenantNotFoundError);
    expect(await rejectionOf(tenants.client('nobody').health())).toBeInstanceOf(TenantNotFoundError);
    expect(() => tenants.client('no/body')).toThrow(InvalidInputError);
    expect(world.proxy.requests).toEqual([]);
    expect(await tenants.get('loja-42')).toBeNull();
    // An encryption key that is not 32 bytes: refused when the registry is made.
    expect(() => world.tenants({ encryptionKey: Buffer.alloc(31).toString('base64') })).toThrow(/encryptionKey must be 32 bytes \(AES-256\), got 31/);
    expect(() => world.tenants({ encryptionKey: 'x' })).toThrow(ConfigurationError);
  });

  it('names the missing scopes: an error when the integration needs one, nothing stored', async () => {
    const world = await startWorld({ merchants: [{ keys: [{ scopes: ['catalog:write', 'webhooks:manage'] }, { scopes: ['orders:read', 'webhooks:manage', 'stock:write'] }] }] });
    const tenants = world.tenants();
    const [noOrders, partial] = world.sandbox.merchants[0]!.keys;
    const error = await rejectionOf(tenants.connect('loja-1', { apiKey: noOrders!.apiKey }));
    expect(error).toBeInstanceOf(TenantConnectError);
    expect(error).toMatchObject({ reason: 'missing_scopes', missingScopes: ['orders:read'], tenantId: 'loja-1' });
    expect(await tenants.get('loja-1')).toBeNull();
    const connected = await tenants.connect('loja-1', { apiKey: partial!.apiKey });
    expect(connected.missingScopes).toEqual(['catalog:write', 'loyalty:read', 'loyalty:write']);
  });

  it('refuses a second tenant id for one merchant unless allowSameMerchant, and a key of another merchant', async () => {
    const world = await startWorld({ merchants: [{ keys: 2 }, {}] });
    const tenants = world.tenants();
    const [a, b] = world.sandbox.merchants;
    await tenants.connect('prod', { apiKey: a!.keys[0]!.apiKey });
    const taken = await rejectionOf(tenants.connect('test-store', { apiKey: a!.keys[1]!.apiKey }));
    expect(taken).toMatchObject({ reason: 'merchant_taken', existingTenantId: 'prod' });
    expect(await tenants.get('test-store')).toBeNull();
    expect((await tenants.connect('test-store', { apiKey: a!.keys[1]!.apiKey, allowSameMerchant: true })).merchantId).toBe(a!.merchantId);
    expect(await rejectionOf(tenants.connect('prod', { apiKey: b!.keys[0]!.apiKey }))).toMatchObject({ reason: 'merchant_mismatch' });
    expect(await rejectionOf(tenants.updateKey('prod', b!.keys[0]!.apiKey))).toMatchObject({ reason: 'merchant_mismatch' });
    expect((await tenants.get('prod'))?.merchantId).toBe(a!.merchantId);
  });

  it('at the endpoint limit, names the endpoints that are not this tenant\'s', async () => {
    const world = await startWorld({ merchants: [{}] });
    const tenants = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const other = await world.sandbox.handle(new Request(`${world.sandbox.url}/integration/v1/health`, { headers: { 'x-api-key': merchant.keys[0]!.apiKey } }));
    expect(other.status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await world.sandbox.handle(
        new Request(`${world.sandbox.url}/integration/v1/webhooks`, {
          method: 'POST',
          headers: { 'x-api-key': merchant.keys[0]!.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${world.receiver.url}/other-${i}?token=hidden`, events: ['order.created'] }),
        }),
      );
      ids.push(((await created.json()) as { id: string }).id);
    }
    const error = await rejectionOf(tenants.connect('loja-1', { apiKey: merchant.keys[0]!.apiKey }));
    expect(error).toMatchObject({ reason: 'endpoint_limit', foreignEndpoints: ids.map((id) => ({ id, url: expect.not.stringContaining('token') })) });
    expect((error as Error).message).toContain(ids[0]);
    expect((await tenants.get('loja-1'))?.status).toBe('connecting');
  });
});

describe('client and a revoked key', () => {
  it('after one 401 the tenant is key_invalid in every process sharing the store: no further request with that key; the others go on; updateKey restores it', async () => {
    const world = await startWorld();
    const here = world.tenants();
    const [a, b] = world.sandbox.merchants;
    await here.connect('loja-a', { apiKey: a!.keys[0]!.apiKey });
    await here.connect('loja-b', { apiKey: b!.keys[0]!.apiKey });
    // Another process: its own registry on the same file.
    const there = world.tenants();
    expect((await there.client('loja-a').health()).merchant_id).toBe(a!.merchantId);

    world.sandbox.revokeKey(a!.keys[0]!.apiKey);
    const before = requestsOf(world.proxy, a!.keys[0]!.apiKey).length;
    const met = await rejectionOf(here.client('loja-a').orders.get('5f4b1c2a-0000-4000-8000-000000000001'));
    expect(met).toBeInstanceOf(TenantKeyInvalidError);
    expect(met).toBeInstanceOf(MainTenantKeyInvalidError);
    expect((met as TenantKeyInvalidError).tenantId).toBe('loja-a');
    expect((met as Error).cause).toBeInstanceOf(AuthenticationError);
    const record = await here.get('loja-a');
    expect(record).toMatchObject({ status: 'key_invalid', keyInvalidAt: expect.any(String) });
    expect((met as TenantKeyInvalidError).keyInvalidAt).toBe(record!.keyInvalidAt);

    // Nothing more is sent with that key, from either process, whatever the call.
    expect(await rejectionOf(here.client('loja-a').health())).toBeInstanceOf(TenantKeyInvalidError);
    expect(await rejectionOf(there.client('loja-a').orders.get('5f4b1c2a-0000-4000-8000-000000000001'))).toBeInstanceOf(TenantKeyInvalidError);
    const bulk = await rejectionOf(there.client('loja-a').catalog.upsertProducts([{ external_id: 'SKU-9', name: 'x', price: 1 }]));
    expect(bulk).toBeInstanceOf(BulkOperationError);
    expect((bulk as BulkOperationError).cause).toBeInstanceOf(TenantKeyInvalidError);
    expect(requestsOf(world.proxy, a!.keys[0]!.apiKey).slice(before)).toEqual(['GET /orders/5f4b1c2a-0000-4000-8000-000000000001']);

    // The other tenant goes on.
    expect((await there.client('loja-b').health()).merchant_id).toBe(b!.merchantId);
    const invalid = [];
    for await (const tenant of here.list({ status: 'key_invalid' })) invalid.push(tenant.id);
    expect(invalid).toEqual(['loja-a']);

    const next = world.sandbox.addKey(a!.merchantId);
    const updated = await here.updateKey('loja-a', next.apiKey);
    expect(updated).toMatchObject({ status: 'active', keyInvalidAt: null });
    expect((await there.client('loja-a').health()).merchant_id).toBe(a!.merchantId);
    // The new key is checked, then registers the tenant's endpoint (endpoints belong to a key) and tests it; the revoked key is not sent.
    expect(requestsOf(world.proxy, next.apiKey)).toEqual(['GET /health', 'GET /webhooks', 'GET /webhooks', 'POST /webhooks', `POST /webhooks/${updated.endpointId}/test`, 'GET /health']);
    expect(requestsOf(world.proxy, a!.keys[0]!.apiKey).slice(before)).toEqual(['GET /orders/5f4b1c2a-0000-4000-8000-000000000001']);
  });

  it('a tenant whose connect did not finish meets a 401 once too: key_invalid, and its next calls send nothing', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    world.proxy.fault = (request) => (request.method === 'POST' && request.path.endsWith('/webhooks') ? 'answer500' : undefined);
    await rejectionOf(tenants.connect('loja-a', { apiKey }));
    world.proxy.fault = undefined;
    expect((await tenants.get('loja-a'))?.status).toBe('connecting');
    world.sandbox.revokeKey(apiKey);
    const before = requestsOf(world.proxy, apiKey).length;
    for (let call = 0; call < 5; call++) expect(await rejectionOf(tenants.client('loja-a').health())).toBeInstanceOf(TenantKeyInvalidError);
    expect(requestsOf(world.proxy, apiKey).slice(before)).toEqual(['GET /health']);
    expect(await tenants.get('loja-a')).toMatchObject({ status: 'key_invalid', keyInvalidAt: expect.any(String), connectedAt: null });
  });

  it('a call waiting for a token when another process met the 401 is refused once granted, not sent', async () => {
    const world = await startWorld();
    const clock = new ManualClock();
    // One token, then one a second: the second call of this registry waits for the clock.
    const waiting = world.tenants({ clock, keyBudget: { requestsPerMinute: 60, burst: 1 } });
    const other = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    await other.connect('loja-a', { apiKey });
    const client = waiting.client('loja-a');
    await client.health();
    const queued = rejectionOf(client.orders.get('5f4b1c2a-0000-4000-8000-000000000002'));
    await new Promise((resolve) => setTimeout(resolve, 50)); // it has read the tenant (active) and waits for a token
    world.sandbox.revokeKey(apiKey);
    expect(await rejectionOf(other.client('loja-a').health())).toBeInstanceOf(TenantKeyInvalidError);
    const sent = requestsOf(world.proxy, apiKey).length;
    clock.advance(1_000);
    expect(await queued).toBeInstanceOf(TenantKeyInvalidError);
    expect(requestsOf(world.proxy, apiKey).length).toBe(sent);
  });

  it('a 401 met with a key another process replaced meanwhile is repeated once with the new key, and marks nothing', async () => {
    const world = await startWorld();
    const other = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const old = merchant.keys[0]!.apiKey;
    const next = world.sandbox.addKey(merchant.merchantId);
    let raced = false;
    // Between this registry's read of the tenant and its request, the merchant rotates its key and another process stores the new one.
    const racing: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (!raced && request.headers.get('x-api-key') === old && new URL(request.url).pathname.endsWith('/orders/5f4b1c2a-0000-4000-8000-000000000003')) {
        raced = true;
        world.sandbox.revokeKey(old);
        await other.updateKey('loja-a', next.apiKey);
      }
      return fetch(request);
    };
    const here = world.tenants({ clientOptions: { random: () => 0, fetch: racing } });
    await here.connect('loja-a', { apiKey: old });
    const error = await rejectionOf(here.client('loja-a').orders.get('5f4b1c2a-0000-4000-8000-000000000003'));
    expect(error).toMatchObject({ name: 'NotFoundError' }); // answered with the new key
    expect(raced).toBe(true);
    expect((await here.get('loja-a'))?.status).toBe('active');
    expect(requestsOf(world.proxy, next.apiKey)).toContain('GET /orders/5f4b1c2a-0000-4000-8000-000000000003');
  });

  it('gives the same client while it is held and keeps only maxIdleClients idle ones', async () => {
    const world = await startWorld();
    const tenants = world.tenants({ maxIdleClients: 2 });
    const first = tenants.client('t-1');
    expect(tenants.client('t-1')).toBe(first);
    tenants.client('t-2');
    tenants.client('t-3');
    expect(tenantsInternals(tenants)!.heldClients()).toBe(2);
    // Still held by this test: the same client comes back.
    expect(tenants.client('t-1')).toBe(first);
  });
});

describe('disconnect', () => {
  it('deletes the endpoint, erases the credentials, keeps the record; its calls fail; a second call is a no-op', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const connected = await tenants.connect('loja-1', { apiKey: merchant.keys[0]!.apiKey });
    const client = tenants.client('loja-1');
    await tenants.disconnect('loja-1');
    const listed = await world.sandbox.handle(new Request(`${world.sandbox.url}/integration/v1/webhooks`, { headers: { 'x-api-key': merchant.keys[0]!.apiKey } }));
    expect(((await listed.json()) as { data: unknown[] }).data).toEqual([]);
    expect(await tenants.get('loja-1')).toMatchObject({ status: 'disconnected', endpointId: null, disconnectedAt: expect.any(String) });
    expect(await tenantsInternals(tenants)!.secretsFor('loja-1')).toBeNull();
    expect(await rejectionOf(client.health())).toMatchObject({ name: 'TenantNotFoundError', reason: 'disconnected' });
    expect(await rejectionOf(tenants.updateKey('loja-1', merchant.keys[0]!.apiKey))).toBeInstanceOf(TenantNotFoundError);
    await tenants.disconnect('loja-1');
    const all = [];
    for await (const tenant of tenants.list()) all.push(tenant.id);
    expect(all).toEqual([]);
    const disconnected = [];
    for await (const tenant of tenants.list({ status: 'disconnected' })) disconnected.push(tenant.id);
    expect(disconnected).toEqual(['loja-1']);
    // Connecting again starts afresh.
    const again = await tenants.connect('loja-1', { apiKey: merchant.keys[0]!.apiKey });
    expect(again.endpointId).not.toBe(connected.endpointId);
  });
});

describe('secrets never show', () => {
  it('in records, errors, inspect, JSON, or log lines', async () => {
    const world = await startWorld();
    const lines: string[] = [];
    const logger = { warn: (message: string, fields?: unknown) => lines.push(message + JSON.stringify(fields)), debug: (message: string, fields?: unknown) => lines.push(message + JSON.stringify(fields)) };
    const tenants = world.tenants({ logger });
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const tenant = await tenants.connect('loja-1', { apiKey });
    const client = tenants.client('loja-1');
    await client.health();
    world.sandbox.revokeKey(apiKey);
    const error = await rejectionOf(client.health());
    const secret = (await tenantsInternals(tenants)!.secretsFor('loja-1'))![0]!.secret;
    const shown = [
      JSON.stringify(tenant),
      inspect(tenant, { depth: 10 }),
      JSON.stringify(tenants),
      inspect(tenants, { depth: 10, showHidden: true }),
      inspect(client, { depth: 10, showHidden: true }),
      JSON.stringify(client),
      JSON.stringify(error),
      inspect(error, { depth: 10 }),
      String((error as Error).stack),
      ...lines,
    ].join('\n');
    for (const value of [apiKey, apiKey.split('_')[2]!, secret, world.encryptionKey]) expect(shown).not.toContain(value);
    expect(lines.some((line) => line.includes('key_invalid'))).toBe(true);
  });
});
