// Faults at every step of connect and disconnect, against the sandbox: a 500 or a reset after the
// service registered the endpoint, a failed test delivery, a process SIGKILLed between steps. After
// each, no orphan endpoint remains once a second call has completed the first, and every endpoint
// at the tenant's URL is one whose secret the store holds. On a SQLite file and on a real Postgres:
// what a crash leaves half-written is each store's records.
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConnectionError, InternalServerError } from 'integration-sdk';
import type { Tenants } from 'integration-sdk/tenants';
import { TenantNotFoundError } from 'integration-sdk/tenants';
import { postgresTenantStore } from 'integration-sdk/tenants/postgres';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { usePostgres } from '../inbox/support/postgres.ts';
import { rejectionOf } from '../e2e/helpers.ts';
import { killWhileHung, startWorld, type Fault, type World } from './support/fixture.ts';

const script = fileURLToPath(new URL('./support/connect-process.ts', import.meta.url));
const postgres = usePostgres();
type StoreKind = 'sqlite' | 'postgres';

/**
 * Where a world's registry (and the crash tests' child process) keeps its records: its SQLite file,
 * or on Postgres a schema named after that file (one per world).
 */
function placeOf(world: World, kind: StoreKind): Record<string, string> {
  if (kind === 'sqlite') return {};
  return { TENANTS_PG_URL: postgres.current.url, TENANTS_PG_SCHEMA: `connect_faults_${basename(world.dbPath, '.db').replaceAll('-', '_')}` };
}

/** A registry of the world on the store of `kind`. */
function registry(world: World, kind: StoreKind): Tenants {
  if (kind === 'sqlite') return world.tenants();
  const { TENANTS_PG_URL, TENANTS_PG_SCHEMA } = placeOf(world, kind);
  return world.tenants({ store: postgresTenantStore({ connectionString: TENANTS_PG_URL!, schema: TENANTS_PG_SCHEMA! }) });
}

/** The endpoints the service has at the tenant's URL. */
async function endpointsAt(world: World, apiKey: string, tenantId: string): Promise<string[]> {
  const answer = await world.sandbox.handle(new Request(`${world.sandbox.url}/integration/v1/webhooks`, { headers: { 'x-api-key': apiKey } }));
  const { data } = (await answer.json()) as { data: Array<{ id: string; url: string }> };
  return data.filter((endpoint) => endpoint.url === world.webhookUrl(tenantId)).map((endpoint) => endpoint.id);
}

/** After a completing call: one endpoint at the URL, the tenant's, whose secret is held. */
async function expectCompleted(world: World, tenants: Tenants, apiKey: string, tenantId: string): Promise<void> {
  const tenant = await tenants.get(tenantId);
  expect(tenant?.status).toBe('active');
  expect(await endpointsAt(world, apiKey, tenantId)).toEqual([tenant!.endpointId]);
  const secrets = await tenantsInternals(tenants)!.secretsFor(tenantId);
  expect(secrets!.map((secret) => secret.endpointId)).toEqual([tenant!.endpointId]);
}

function failOnce(world: World, method: string, pathEnd: string, fault: Fault): void {
  let done = false;
  world.proxy.fault = (request) => {
    if (done || request.method !== method || !request.path.endsWith(pathEnd)) return undefined;
    done = true;
    return fault;
  };
}

describe.each(['sqlite', 'postgres'] as const)('on %s', (kind) => {
  describe('connect with faults', () => {
    for (const [fault, errorClass] of [['answer500', InternalServerError], ['reset', ConnectionError]] as const) {
      it(`a ${fault} after the service registered the endpoint leaves no orphan, and a second connect completes`, async () => {
        const world = await startWorld();
        const tenants = registry(world, kind);
        const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
        failOnce(world, 'POST', '/webhooks', fault);
        expect(await rejectionOf(tenants.connect('loja-1', { apiKey }))).toBeInstanceOf(errorClass);
        expect(await endpointsAt(world, apiKey, 'loja-1')).toEqual([]);
        expect((await tenants.get('loja-1'))?.status).toBe('connecting');
        expect(await tenantsInternals(tenants)!.secretsFor('loja-1')).toEqual([]);
        await tenants.connect('loja-1', { apiKey });
        await expectCompleted(world, tenants, apiKey, 'loja-1');
      });
    }

    it('a failed test delivery deletes the endpoint this call registered; a second connect completes', async () => {
      const world = await startWorld();
      const tenants = registry(world, kind);
      const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
      failOnce(world, 'POST', '/test', 'answer500');
      expect(await rejectionOf(tenants.connect('loja-1', { apiKey }))).toBeInstanceOf(InternalServerError);
      expect(await endpointsAt(world, apiKey, 'loja-1')).toEqual([]);
      expect(await tenantsInternals(tenants)!.secretsFor('loja-1')).toEqual([]);
      await tenants.connect('loja-1', { apiKey });
      await expectCompleted(world, tenants, apiKey, 'loja-1');
    });

    for (const [step, method, pathEnd] of [
      ['the endpoint was registered (its secret never stored)', 'POST', '/webhooks'],
      ['the test delivery was asked for', 'POST', '/test'],
      ['health answered', 'GET', '/health'],
    ] as const) {
      it(`a process SIGKILLed once ${step}: a second connect completes it, with no orphan`, async () => {
        const world = await startWorld();
        const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
        failOnce(world, method, pathEnd, 'hang');
        expect(await killWhileHung(world, script, { TENANTS_API_KEY: apiKey, ...placeOf(world, kind) })).toBe('SIGKILL');

        const tenants = registry(world, kind);
        const left = await endpointsAt(world, apiKey, 'loja-1');
        expect(left).toHaveLength(method === 'GET' ? 0 : 1);
        await tenants.connect('loja-1', { apiKey });
        await expectCompleted(world, tenants, apiKey, 'loja-1');
        if (pathEnd === '/webhooks') expect(await endpointsAt(world, apiKey, 'loja-1')).not.toContain(left[0]); // replaced: its secret was lost
        if (pathEnd === '/test') expect(await endpointsAt(world, apiKey, 'loja-1')).toEqual(left); // reused: its secret was stored
      });
    }
  });

  describe('updateKey with faults', () => {
    it('a health check that keeps failing stores nothing (the tenant stays key_invalid); a second call completes', async () => {
      const world = await startWorld();
      const tenants = registry(world, kind);
      const merchant = world.sandbox.merchants[0]!;
      await tenants.connect('loja-1', { apiKey: merchant.keys[0]!.apiKey });
      world.sandbox.revokeKey(merchant.keys[0]!.apiKey);
      await rejectionOf(tenants.client('loja-1').health());
      const next = world.sandbox.addKey(merchant.merchantId);
      world.proxy.fault = (request) => (request.path.endsWith('/health') ? 'answer500' : undefined);
      await expect(tenants.updateKey('loja-1', next.apiKey)).rejects.toBeInstanceOf(InternalServerError);
      world.proxy.fault = undefined;
      expect((await tenants.get('loja-1'))?.status).toBe('key_invalid');
      expect(await tenants.updateKey('loja-1', next.apiKey)).toMatchObject({ status: 'active' });
      expect((await tenants.client('loja-1').health()).merchant_id).toBe(merchant.merchantId);
    });
  });

  describe('disconnect with faults', () => {
    it('500s deleting the endpoint leaves the tenant disconnecting (its client refused); a second call completes', async () => {
      const world = await startWorld();
      const tenants = registry(world, kind);
      const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
      const tenant = await tenants.connect('loja-1', { apiKey });
      // Every attempt fails (a DELETE is retried, and a retry meeting 404 counts as deleted): the service is down for it.
      world.proxy.fault = (request) => (request.method === 'DELETE' ? 'answer500' : undefined);
      await expect(tenants.disconnect('loja-1')).rejects.toBeInstanceOf(InternalServerError);
      world.proxy.fault = undefined;
      expect((await tenants.get('loja-1'))?.status).toBe('disconnecting');
      expect(await rejectionOf(tenants.client('loja-1').health())).toBeInstanceOf(TenantNotFoundError);
      await tenants.disconnect('loja-1');
      expect((await tenants.get('loja-1'))?.status).toBe('disconnected');
      expect(await endpointsAt(world, apiKey, 'loja-1')).toEqual([]);
    });
  });
});
