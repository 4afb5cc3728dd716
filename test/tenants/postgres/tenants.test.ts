// The registry on a real Postgres shared by two registries (two processes' worth): a revoked key
// stops after one 401 for both, the raw columns hold no key and no secret, rekey moves every value;
// a rotation has one owner across registries, and a key change moves the endpoint to the new key.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from 'integration-sdk';
import { TenantKeyInvalidError } from 'integration-sdk/tenants';
import { postgresTenantStore } from 'integration-sdk/tenants/postgres';
import { tenantsInternals } from '../../../src/tenants/create-tenants.ts';
import { rejectionOf } from '../../e2e/helpers.ts';
import { usePostgres } from '../../inbox/support/postgres.ts';
import { newEncryptionKey, requestsOf, startWorld } from '../support/fixture.ts';

const postgres = usePostgres();
let schemas = 0;

describe('tenants on postgresTenantStore', () => {
  it('two registries share one store: a revoked key stops after one 401 for both; the raw columns hold no key or secret; rekey', async () => {
    const world = await startWorld();
    const schema = `tenants_e2e_${process.pid}_${++schemas}`;
    const store = () => postgresTenantStore({ connectionString: postgres.current.url, schema });
    const one = world.tenants({ store: store() });
    const two = world.tenants({ store: store() });
    const [a, b] = world.sandbox.merchants;
    await one.connect('loja-a', { apiKey: a!.keys[0]!.apiKey });
    await two.connect('loja-b', { apiKey: b!.keys[0]!.apiKey });
    expect(await rejectionOf(two.connect('loja-a2', { apiKey: a!.keys[0]!.apiKey }))).toMatchObject({ reason: 'merchant_taken', existingTenantId: 'loja-a' });

    world.sandbox.revokeKey(a!.keys[0]!.apiKey);
    expect(await rejectionOf(two.client('loja-a').health())).toBeInstanceOf(TenantKeyInvalidError);
    expect(await rejectionOf(one.client('loja-a').health())).toBeInstanceOf(TenantKeyInvalidError);
    expect(requestsOf(world.proxy, a!.keys[0]!.apiKey).filter((request) => request === 'GET /health')).toHaveLength(3); // two connects', and the one 401
    expect((await one.client('loja-b').health()).merchant_id).toBe(b!.merchantId);

    const client = new pg.Client({ connectionString: postgres.current.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT t.api_key, s.secret, m.value FROM "${schema}".tenants t LEFT JOIN "${schema}".secrets s ON s.tenant_id = t.id CROSS JOIN "${schema}".meta m`);
      const raw = JSON.stringify(rows);
      const secret = (await tenantsInternals(one)!.secretsFor('loja-b'))![0]!.secret;
      for (const value of [a!.keys[0]!.apiKey, b!.keys[0]!.apiKey, b!.keys[0]!.apiKey.split('_')[2]!, secret, secret.slice(6), world.encryptionKey]) expect(raw).not.toContain(value);
      expect(raw).toMatch(/v1\.[0-9a-f]{16}\./);
    } finally {
      await client.end();
    }

    const current = newEncryptionKey();
    const rotating = world.tenants({ store: store(), encryptionKey: { current, previous: [world.encryptionKey] } });
    expect(await rotating.rekey()).toEqual({ resealed: 4, unchanged: 0 });
    const after = world.tenants({ store: store(), encryptionKey: current });
    expect((await after.client('loja-b').health()).merchant_id).toBe(b!.merchantId);
    expect(await rejectionOf(world.tenants({ store: store() }).get('loja-b'))).toBeInstanceOf(ConfigurationError);
  });

  it('a key change while another registry rotates the secret: refused as in progress; then the endpoint moves to the new key, one delivery per order', async () => {
    const world = await startWorld({ merchants: [{}], rate: undefined });
    const schema = `tenants_e2e_${process.pid}_${++schemas}`;
    const store = () => postgresTenantStore({ connectionString: postgres.current.url, schema });
    const one = world.tenants({ store: store() });
    const two = world.tenants({ store: store() });
    const merchant = world.sandbox.merchants[0]!;
    const old = merchant.keys[0]!.apiKey;
    await one.connect('loja-1', { apiKey: old });
    const next = world.sandbox.addKey(merchant.merchantId).apiKey;

    const rotation = one.rotateWebhookSecret('loja-1');
    while ((await tenantsInternals(one)!.rotationFor('loja-1')) === null) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await rejectionOf(two.rotateWebhookSecret('loja-1'))).toMatchObject({ reason: 'in_progress', tenantId: 'loja-1' });
    expect(await rejectionOf(two.updateKey('loja-1', next))).toMatchObject({ reason: 'in_progress', tenantId: 'loja-1' });
    // The new key was only checked (the merchant comes from health()); nothing registered with it.
    expect(requestsOf(world.proxy, next)).toEqual(['GET /health']);
    const rotated = await rotation;

    const updated = await two.updateKey('loja-1', next);
    expect(updated.endpointId).not.toBe(rotated.endpointId);
    const listed = async (apiKey: string) => {
      const answer = await world.sandbox.handle(new Request(`${world.sandbox.url}/integration/v1/webhooks`, { headers: { 'x-api-key': apiKey } }));
      return ((await answer.json()) as { data: Array<{ id: string }> }).data.map((endpoint) => endpoint.id);
    };
    expect(await listed(old)).toEqual([]);
    expect(await listed(next)).toEqual([updated.endpointId]);
    expect((await tenantsInternals(one)!.secretsFor('loja-1'))!.map((secret) => secret.endpointId)).toEqual([updated.endpointId]);
    expect(await tenantsInternals(one)!.rotationFor('loja-1')).toBeNull();
    await world.sandbox.idle();
    const before = new Set(world.sandbox.deliveries({ event: 'order.created' }).map((delivery) => delivery.id));
    world.sandbox.createOrder({ store_id: merchant.storeIds[0]! });
    await world.sandbox.idle();
    const delivered = world.sandbox.deliveries({ event: 'order.created' }).filter((delivery) => !before.has(delivery.id));
    expect(delivered.map((delivery) => delivery.webhook_id)).toEqual([updated.endpointId]);
  });
});
