// A merchant's new key (updateKey, or connect with another key) against the sandbox, where
// endpoints belong to the key that registered them (spec 4.5: GET /webhooks lists the calling key's
// endpoints) and a revoked key's endpoints deliver nothing. After the change the tenant receives
// through an endpoint of its new key whose secret is held, each order once; the old key's endpoint
// is deleted when that key still works; nothing is left behind by disconnect; a process killed
// between the steps leaves a state a second call completes. Also: what connect and disconnect
// refuse or skip before sending anything (a disconnecting tenant, a key known invalid).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InternalServerError } from 'integration-sdk';
import { TenantConnectError, TenantKeyInvalidError, type Tenants } from 'integration-sdk/tenants';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { rejectionOf } from '../e2e/helpers.ts';
import { killWhileHung, requestsOf, startWorld, type World } from './support/fixture.ts';

const updateKeyScript = fileURLToPath(new URL('./support/connect-process.ts', import.meta.url));

/** The endpoints a key sees at `url`; `'refused'` for a key the service refuses. */
async function endpointsAt(world: World, apiKey: string, url: string): Promise<string[] | 'refused'> {
  const answer = await world.sandbox.handle(new Request(`${world.sandbox.url}/integration/v1/webhooks`, { headers: { 'x-api-key': apiKey } }));
  if (answer.status === 401) return 'refused';
  const { data } = (await answer.json()) as { data: Array<{ id: string; url: string }> };
  return data.filter((endpoint) => endpoint.url === url).map((endpoint) => endpoint.id);
}

/** The endpoints that delivered one new order of the merchant (one delivery each expected). */
async function deliveriesOfOneOrder(world: World, storeId: string): Promise<string[]> {
  await world.sandbox.idle();
  const before = new Set(world.sandbox.deliveries({ event: 'order.created' }).map((delivery) => delivery.id));
  world.sandbox.createOrder({ store_id: storeId });
  await world.sandbox.idle();
  return world.sandbox
    .deliveries({ event: 'order.created' })
    .filter((delivery) => !before.has(delivery.id))
    .map((delivery) => delivery.webhook_id);
}

const held = async (tenants: Tenants, id: string) => ((await tenantsInternals(tenants)!.secretsFor(id)) ?? []).map((secret) => secret.endpointId);

/** The change is complete: one endpoint at the URL, the new key's, the tenant's, its secret the only one held, no rotation left. */
async function expectOnNewKey(world: World, tenants: Tenants, id: string, oldKey: string, newKey: string): Promise<string> {
  const tenant = await tenants.get(id);
  expect(tenant?.status).toBe('active');
  const url = world.webhookUrl(id);
  expect(await endpointsAt(world, newKey, url)).toEqual([tenant!.endpointId]);
  expect(await endpointsAt(world, oldKey, url)).toEqual([]);
  expect(await held(tenants, id)).toEqual([tenant!.endpointId]);
  expect(await tenantsInternals(tenants)!.rotationFor(id)).toBeNull();
  return tenant!.endpointId!;
}

describe('a new key for a connected tenant', { timeout: 60_000 }, () => {
  it('updateKey after the old key was revoked: the endpoint moves to the new key, orders arrive again, once, and the revoked key is not sent', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const tenants = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const old = merchant.keys[0]!.apiKey;
    await tenants.connect('loja-1', { apiKey: old });
    const next = world.sandbox.addKey(merchant.merchantId);
    world.sandbox.revokeKey(old);
    expect(await rejectionOf(tenants.client('loja-1').health())).toBeInstanceOf(TenantKeyInvalidError);
    const sentWithOld = requestsOf(world.proxy, old).length;

    const updated = await tenants.updateKey('loja-1', next.apiKey);

    expect(updated).toMatchObject({ status: 'active', keyInvalidAt: null });
    expect(requestsOf(world.proxy, old)).toHaveLength(sentWithOld);
    expect(await endpointsAt(world, next.apiKey, world.webhookUrl('loja-1'))).toEqual([updated.endpointId]);
    expect(await held(tenants, 'loja-1')).toEqual([updated.endpointId]);
    expect(await tenantsInternals(tenants)!.rotationFor('loja-1')).toBeNull();
    expect(await deliveriesOfOneOrder(world, merchant.storeIds[0]!)).toEqual([updated.endpointId]);
  });

  it('connect with a second key while the first still works: one delivery per order, the first key\'s endpoint deleted, and disconnect leaves nothing under either key', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const tenants = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const first = merchant.keys[0]!.apiKey;
    await tenants.connect('loja-1', { apiKey: first });
    const second = world.sandbox.addKey(merchant.merchantId).apiKey;

    await tenants.connect('loja-1', { apiKey: second });

    const endpointId = await expectOnNewKey(world, tenants, 'loja-1', first, second);
    expect(await deliveriesOfOneOrder(world, merchant.storeIds[0]!)).toEqual([endpointId]);
    const result = await tenants.disconnect('loja-1');
    expect(result.endpointsLeft).toEqual([]);
    expect(await endpointsAt(world, first, world.webhookUrl('loja-1'))).toEqual([]);
    expect(await endpointsAt(world, second, world.webhookUrl('loja-1'))).toEqual([]);
    expect(await deliveriesOfOneOrder(world, merchant.storeIds[0]!)).toEqual([]);
  });

  it('updateKey while the old key still works: the old key\'s endpoint is deleted with it after the new one is registered and tested', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const tenants = world.tenants();
    const merchant = world.sandbox.merchants[0]!;
    const old = merchant.keys[0]!.apiKey;
    const before = await tenants.connect('loja-1', { apiKey: old });
    const next = world.sandbox.addKey(merchant.merchantId).apiKey;
    const sentWithOld = requestsOf(world.proxy, old).length;

    const updated = await tenants.updateKey('loja-1', next);

    const endpointId = await expectOnNewKey(world, tenants, 'loja-1', old, next);
    expect(updated.endpointId).toBe(endpointId);
    expect(endpointId).not.toBe(before.endpointId);
    const withNew = requestsOf(world.proxy, next);
    expect(withNew).toContain('POST /webhooks');
    expect(withNew).toContain(`POST /webhooks/${endpointId}/test`);
    // The old key only deletes its own endpoint, once the new one was tested.
    expect(requestsOf(world.proxy, old).slice(sentWithOld)).toEqual(['GET /webhooks', `DELETE /webhooks/${before.endpointId}`]);
    const order = world.proxy.requests.map((request) => `${request.method} ${request.path}`);
    expect(order.indexOf(`DELETE /integration/v1/webhooks/${before.endpointId}`)).toBeGreaterThan(order.indexOf(`POST /integration/v1/webhooks/${endpointId}/test`));
    expect(await deliveriesOfOneOrder(world, merchant.storeIds[0]!)).toEqual([endpointId]);
    await tenants.disconnect('loja-1');
    expect(await endpointsAt(world, old, world.webhookUrl('loja-1'))).toEqual([]);
    expect(await endpointsAt(world, next, world.webhookUrl('loja-1'))).toEqual([]);
  });

  for (const [step, method, pathEnd, left] of [
    ['the new key\'s endpoint was registered (its secret never stored)', 'POST', '/webhooks', 'registering'],
    ['its test delivery was asked for', 'POST', '/test', 'verifying'],
    ['the old key\'s endpoint was deleted (its secret still held)', 'DELETE', '', 'retiring'],
  ] as const) {
    it(`a process SIGKILLed once ${step}: a second updateKey completes the change`, async () => {
      const world = await startWorld({ merchants: [{}], rate: undefined });
      const tenants = world.tenants();
      const merchant = world.sandbox.merchants[0]!;
      const old = merchant.keys[0]!.apiKey;
      const before = await tenants.connect('loja-1', { apiKey: old });
      const next = world.sandbox.addKey(merchant.merchantId).apiKey;
      let hung = false;
      world.proxy.fault = (request) => {
        if (hung || request.method !== method || !request.path.endsWith(pathEnd)) return undefined;
        hung = true;
        return 'hang';
      };
      expect(await killWhileHung(world, updateKeyScript, { TENANTS_API_KEY: next, TENANTS_OPERATION: 'updateKey' })).toBe('SIGKILL');

      const rotation = await tenantsInternals(tenants)!.rotationFor('loja-1');
      expect(rotation).toMatchObject({ kind: 'key', step: left, oldEndpointId: before.endpointId });
      // Whatever was registered under the new key, the old endpoint's secret is still held until the end.
      expect(await held(tenants, 'loja-1')).toContain(before.endpointId);
      if (left === 'verifying') expect((await held(tenants, 'loja-1')).sort()).toEqual([before.endpointId, rotation!.newEndpointId].sort());

      await tenants.updateKey('loja-1', next);
      const endpointId = await expectOnNewKey(world, tenants, 'loja-1', old, next);
      if (left !== 'registering') expect(endpointId).toBe(rotation!.newEndpointId);
      expect(await deliveriesOfOneOrder(world, merchant.storeIds[0]!)).toEqual([endpointId]);
    });
  }
});

describe('refused or skipped before anything is sent', () => {
  it('connect of a disconnecting tenant is refused with a typed error saying to finish the disconnect; nothing sent, nothing replaced', async () => {
    const world = await startWorld({ merchants: [{ keys: 2 }], rate: undefined });
    const tenants = world.tenants();
    const [first, second] = world.sandbox.merchants[0]!.keys;
    await tenants.connect('loja-1', { apiKey: first!.apiKey });
    world.proxy.fault = (request) => (request.method === 'DELETE' ? 'answer500' : undefined);
    await expect(tenants.disconnect('loja-1')).rejects.toBeInstanceOf(InternalServerError);
    world.proxy.fault = undefined;
    const store = tenantsInternals(tenants)!.store;
    const sealedBefore = (await store.get('loja-1'))!.apiKey;
    const sent = world.proxy.requests.length;

    const error = await rejectionOf(tenants.connect('loja-1', { apiKey: second!.apiKey }));

    expect(error).toBeInstanceOf(TenantConnectError);
    expect(error).toMatchObject({ reason: 'disconnecting', tenantId: 'loja-1' });
    expect((error as Error).message).toMatch(/disconnect.*did not finish.*tenants\.disconnect\("loja-1"\)/);
    expect(world.proxy.requests).toHaveLength(sent);
    expect(await store.get('loja-1')).toMatchObject({ status: 'disconnecting', apiKey: sealedBefore });
    await tenants.disconnect('loja-1');
    expect((await tenants.connect('loja-1', { apiKey: second!.apiKey })).status).toBe('active');
  });

  it('disconnect of a key_invalid tenant sends nothing with the revoked key, erases the credentials and names the endpoint it could not delete', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const warnings: unknown[] = [];
    const tenants = world.tenants({ logger: { warn: (message: string, fields?: unknown) => warnings.push([message, fields]) } });
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const connected = await tenants.connect('loja-1', { apiKey });
    world.sandbox.revokeKey(apiKey);
    await rejectionOf(tenants.client('loja-1').health());
    const sent = requestsOf(world.proxy, apiKey).length;

    const result = await tenants.disconnect('loja-1');

    expect(requestsOf(world.proxy, apiKey)).toHaveLength(sent);
    expect(result.endpointsLeft).toEqual([connected.endpointId]);
    expect(result.tenant).toMatchObject({ id: 'loja-1', status: 'disconnected' });
    expect(await tenantsInternals(tenants)!.store.get('loja-1')).toMatchObject({ status: 'disconnected', apiKey: null });
    expect(await held(tenants, 'loja-1')).toEqual([]);
    expect(JSON.stringify(warnings)).toContain(connected.endpointId);
  });
});

describe('a key known refused', () => {
  it('connect or updateKey with the key the tenant met its 401 with is refused with TenantKeyInvalidError, sending nothing', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    await tenants.connect('loja-1', { apiKey });
    world.sandbox.revokeKey(apiKey);
    await rejectionOf(tenants.client('loja-1').health());
    const { keyInvalidAt } = (await tenants.get('loja-1'))!;
    const sent = requestsOf(world.proxy, apiKey).length;

    for (const call of [() => tenants.connect('loja-1', { apiKey }), () => tenants.updateKey('loja-1', apiKey)]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(TenantKeyInvalidError);
      expect(error).toMatchObject({ tenantId: 'loja-1', keyInvalidAt });
    }

    expect(requestsOf(world.proxy, apiKey)).toHaveLength(sent);
    expect(await tenants.get('loja-1')).toMatchObject({ status: 'key_invalid', keyInvalidAt });
  });
});

describe('changed events', () => {
  it('a reconnect with other events registers the new endpoint before deleting the old: a failed registration leaves the old one delivering', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const merchant = world.sandbox.merchants[0]!;
    const apiKey = merchant.keys[0]!.apiKey;
    const before = await world.tenants({ events: ['order.created'] }).connect('loja-1', { apiKey });
    const tenants = world.tenants({ events: ['order.created', 'order.status_changed'] });
    // Every attempt of the registration fails (the client retries a 500 after checking nothing was registered).
    world.proxy.fault = (request) => (request.method === 'POST' && request.path.endsWith('/webhooks') ? 'answer500' : undefined);
    await expect(tenants.connect('loja-1', { apiKey })).rejects.toBeInstanceOf(InternalServerError);
    world.proxy.fault = undefined;

    expect(await tenants.get('loja-1')).toMatchObject({ status: 'active', endpointId: before.endpointId });
    const url = world.webhookUrl('loja-1');
    const left = await endpointsAt(world, apiKey, url);
    expect(left).toContain(before.endpointId);
    expect(await held(tenants, 'loja-1')).toEqual(expect.arrayContaining(left as string[]));
    expect(await deliveriesOfOneOrder(world, merchant.storeIds[0]!)).toEqual(left);

    const after = await tenants.connect('loja-1', { apiKey });
    expect(after.endpointId).not.toBe(before.endpointId);
    expect(await endpointsAt(world, apiKey, url)).toEqual([after.endpointId]);
    expect(await held(tenants, 'loja-1')).toEqual([after.endpointId]);
  });
});
