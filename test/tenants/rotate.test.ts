// tenants.rotateWebhookSecret against the sandbox: the three steps in their order, the endpoint
// limit named, a receiver that never verifies the test (both endpoints stay, a second call
// finishes), and a process SIGKILLed between the steps, after which a second call completes the
// rotation with one endpoint at the tenant's URL whose secret is held, nothing in plain text.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { TenantRotationError, type Tenants } from 'integration-sdk/tenants';
import { verifyWebhook } from 'integration-sdk/webhooks';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { tenantsReceiving } from '../../src/tenants/receiving.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { rejectionOf, startReceiver } from '../e2e/helpers.ts';
import { fileBytes, killWhileHung, requestsOf, startWorld, type World } from './support/fixture.ts';

const script = fileURLToPath(new URL('./support/rotate-process.ts', import.meta.url));

/** The endpoints the service has at the tenant's URL. */
async function endpointsAt(world: World, apiKey: string, url: string): Promise<string[]> {
  const endpoints = await new IntegrationClient({ apiKey, baseUrl: world.sandbox.url }).webhooks.list();
  return endpoints.filter((endpoint) => endpoint.url === url).map((endpoint) => endpoint.id);
}

/** After a completed rotation: one endpoint at the URL, not the old one, the tenant's, the only secret held, no rotation left. */
async function expectRotated(world: World, tenants: Tenants, apiKey: string, tenantId: string, oldEndpointId: string): Promise<string> {
  const tenant = await tenants.get(tenantId);
  expect(tenant?.status).toBe('active');
  expect(tenant?.endpointId).not.toBe(oldEndpointId);
  expect(await endpointsAt(world, apiKey, world.webhookUrl(tenantId))).toEqual([tenant!.endpointId]);
  const secrets = await tenantsInternals(tenants)!.secretsFor(tenantId);
  expect(secrets!.map((secret) => secret.endpointId)).toEqual([tenant!.endpointId]);
  expect(await tenantsInternals(tenants)!.rotationFor(tenantId)).toBeNull();
  return tenant!.endpointId!;
}

/** Moves `clock` on while `promise` runs (a quarter second per turn of the event loop), until it settles. */
async function whileMovingTime<T>(clock: ManualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => {});
  while (!settled) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    clock.advance(250);
  }
  return watched;
}

// Each rotation waits for receivers (2 s) and keeps the old secret a second: room for a loaded machine.
describe('rotateWebhookSecret', { timeout: 60_000 }, () => {
  it('registers a second endpoint, waits for its test delivery, then deletes the old one and drops its secret', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const before = await tenants.connect('loja-1', { apiKey });
    const [oldSecret] = (await tenantsInternals(tenants)!.secretsFor('loja-1'))!;
    const connectRequests = requestsOf(world.proxy, apiKey).length;

    const after = await tenants.rotateWebhookSecret('loja-1');

    const newEndpointId = await expectRotated(world, tenants, apiKey, 'loja-1', before.endpointId!);
    expect(after).toMatchObject({ id: 'loja-1', status: 'active', endpointId: newEndpointId, connectedAt: before.connectedAt });
    const [newSecret] = (await tenantsInternals(tenants)!.secretsFor('loja-1'))!;
    expect(newSecret!.secret).toMatch(/^whsec_/);
    expect(newSecret!.secret).not.toBe(oldSecret!.secret);
    // The new endpoint has the old one's events, and its test delivery reached the receiver before the old endpoint went.
    const rotation = requestsOf(world.proxy, apiKey).slice(connectRequests);
    expect(rotation[0]).toBe('GET /webhooks');
    expect(rotation).toContain('POST /webhooks');
    const tested = rotation.indexOf(`POST /webhooks/${newEndpointId}/test`);
    const deleted = rotation.indexOf(`DELETE /webhooks/${before.endpointId}`);
    expect(tested).toBeGreaterThan(rotation.indexOf('POST /webhooks'));
    expect(deleted).toBeGreaterThan(tested);
    const test = world.sandbox.deliveries({ webhookId: newEndpointId, event: 'webhook.test' });
    expect(test.some((delivery) => delivery.status === 'delivered')).toBe(true);
    // Nothing in plain text at rest: neither secret, in any encoding.
    const bytes = fileBytes(world.dbPath);
    for (const secret of [oldSecret!.secret, newSecret!.secret]) {
      for (const encoded of [secret, secret.slice('whsec_'.length), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex')]) {
        expect(bytes.includes(Buffer.from(encoded))).toBe(false);
      }
    }
    // A second rotation starts afresh from the new endpoint.
    await tenants.rotateWebhookSecret('loja-1');
    await expectRotated(world, tenants, apiKey, 'loja-1', newEndpointId);
  });

  it("ends step 2 on the receiver's record that it verified the new secret, even when its answer was not a 2xx", async () => {
    const world = await startWorld();
    let tenants!: Tenants;
    // A receiver that verifies, records it, then fails to store (503): the delivery log never says delivered.
    const receiver = await startReceiver((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const tenantId = req.url!.split('/').at(-1)!;
        const receiving = tenantsReceiving(tenants)!;
        const state = await receiving.read(tenantId);
        const secret = state?.secrets.find((candidate) => {
          try {
            verifyWebhook(Buffer.concat(chunks), req.headers as Record<string, string>, candidate.secret);
            return true;
          } catch {
            return false;
          }
        });
        if (secret) await receiving.markVerified(tenantId, secret.endpointId, Date.now());
        res.writeHead(req.headers['x-service-event'] === 'webhook.test' && state?.rotating ? 503 : 200).end();
      });
    });
    tenants = world.tenants({ webhookUrl: (id) => `${receiver.url}/hooks/${id}` });
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const before = await tenants.connect('loja-1', { apiKey });
    const after = await tenants.rotateWebhookSecret('loja-1');
    expect(after.endpointId).not.toBe(before.endpointId);
    const tests = world.sandbox.deliveries({ webhookId: after.endpointId!, event: 'webhook.test' });
    expect(tests.every((delivery) => delivery.status !== 'delivered')).toBe(true);
    expect((await tenantsInternals(tenants)!.secretsFor('loja-1'))!.map((secret) => secret.endpointId)).toEqual([after.endpointId]);
  });

  it('two rotations of one tenant at once (two processes): the second is refused as in progress and registers nothing; one endpoint remains', async () => {
    const world = await startWorld();
    const here = world.tenants();
    const there = world.tenants(); // another process's registry on the same file
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const before = await here.connect('loja-1', { apiKey });
    const first = here.rotateWebhookSecret('loja-1');
    // The first call owns the rotation from its first step on (it then waits for receivers).
    while ((await tenantsInternals(here)!.rotationFor('loja-1')) === null) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await rejectionOf(there.rotateWebhookSecret('loja-1'));
    expect(second).toBeInstanceOf(TenantRotationError);
    expect(second).toMatchObject({ reason: 'in_progress', tenantId: 'loja-1' });
    expect((second as Error).message).toMatch(/webhook secret rotation of this tenant is under way by process \d+/);
    // So are a connect and a disconnect of it from elsewhere meanwhile.
    expect(await rejectionOf(there.connect('loja-1', { apiKey }))).toMatchObject({ reason: 'in_progress' });
    expect(await rejectionOf(there.disconnect('loja-1'))).toMatchObject({ reason: 'in_progress' });
    const after = await first;
    expect(requestsOf(world.proxy, apiKey).filter((request) => request === 'POST /webhooks')).toHaveLength(2); // connect's, and one rotation's
    await expectRotated(world, here, apiKey, 'loja-1', before.endpointId!);
    expect(after.endpointId).not.toBe(before.endpointId);
    // Once it ended, the other process rotates again from the new endpoint.
    await there.rotateWebhookSecret('loja-1');
    await expectRotated(world, there, apiKey, 'loja-1', after.endpointId!);
  });

  it('a disconnect that fails while a rotation is recorded lets it go: a second disconnect completes at once', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    await tenants.connect('loja-1', { apiKey });
    world.proxy.fault = (request) => (request.method === 'POST' && request.path.endsWith('/webhooks') ? 'answer500' : undefined);
    await rejectionOf(tenants.rotateWebhookSecret('loja-1'));
    expect(await tenantsInternals(tenants)!.rotationFor('loja-1')).toMatchObject({ step: 'registering', owner: null });
    world.proxy.fault = (request) => (request.method === 'DELETE' ? 'answer500' : undefined);
    await rejectionOf(tenants.disconnect('loja-1'));
    world.proxy.fault = undefined;

    const { tenant } = await tenants.disconnect('loja-1');

    expect(tenant.status).toBe('disconnected');
    expect(await endpointsAt(world, apiKey, world.webhookUrl('loja-1'))).toEqual([]);
    expect(await tenantsInternals(tenants)!.rotationFor('loja-1')).toBeNull();
  });

  it('names every endpoint holding a slot when the integration has five, and records nothing; a free slot lets it run', async () => {
    const world = await startWorld();
    const tenants = world.tenants();
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const before = await tenants.connect('loja-1', { apiKey });
    const client = new IntegrationClient({ apiKey, baseUrl: world.sandbox.url });
    const others = [];
    for (let n = 0; n < 4; n++) others.push(await client.webhooks.create({ url: `${world.receiver.url}/other/${n}?token=t0p`, events: ['order.created'] }));

    const error = await rejectionOf(tenants.rotateWebhookSecret('loja-1'));
    expect(error).toBeInstanceOf(TenantRotationError);
    expect(error).toMatchObject({ reason: 'endpoint_limit', tenantId: 'loja-1' });
    const named = (error as TenantRotationError).endpoints.map((endpoint) => endpoint.id).sort();
    expect(named).toEqual([before.endpointId!, ...others.map((endpoint) => endpoint.id)].sort());
    expect((error as Error).message).toContain(others[0]!.id);
    expect((error as Error).message).toContain(`${before.endpointId} (${world.webhookUrl('loja-1')}, this tenant's)`);
    expect((error as Error).message).not.toContain('t0p');
    // Nothing was registered, so no rotation is under way (the receiver holds nothing for it).
    expect(await tenantsInternals(tenants)!.rotationFor('loja-1')).toBeNull();
    expect(await endpointsAt(world, apiKey, world.webhookUrl('loja-1'))).toEqual([before.endpointId]);

    await client.webhooks.delete(others[0]!.id);
    await tenants.rotateWebhookSecret('loja-1');
    await expectRotated(world, tenants, apiKey, 'loja-1', before.endpointId!);
  });

  it('keeps both endpoints when no receiver verifies the test within 60 s; a second call, once the receiver accepts it, finishes', async () => {
    const world = await startWorld();
    let accepting = true;
    const receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(accepting ? 200 : 400).end());
    });
    const webhookUrl = (id: string) => `${receiver.url}/hooks/${id}`;
    const clock = new ManualClock(Date.now());
    // Time moves only when the test says so; no request may time out while it does.
    const tenants = world.tenants({ webhookUrl, clock, clientOptions: { random: () => 0, timeoutMs: 3_600_000 } });
    const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
    const before = await tenants.connect('loja-1', { apiKey });
    accepting = false;

    const error = await rejectionOf(whileMovingTime(clock, tenants.rotateWebhookSecret('loja-1')));
    expect(error).toBeInstanceOf(TenantRotationError);
    expect(error).toMatchObject({ reason: 'not_verified' });
    // The sandbox delivers in real time: the last test delivery may be between attempts (retrying),
    // out of them (dead), or in its next attempt (pending, its previous answer still shown).
    expect((error as Error).message).toMatch(/within 60 s, and the last test delivery is (pending|retrying|dead) \(answer 400/);
    const newEndpointId = (error as TenantRotationError).newEndpointId!;
    // A refused test was sent again during the wait.
    expect(requestsOf(world.proxy, apiKey).filter((request) => request === `POST /webhooks/${newEndpointId}/test`).length).toBeGreaterThan(1);
    expect((await endpointsAt(world, apiKey, webhookUrl('loja-1'))).sort()).toEqual([before.endpointId, newEndpointId].sort());
    expect((await tenantsInternals(tenants)!.secretsFor('loja-1'))!.map((secret) => secret.endpointId)).toEqual([newEndpointId, before.endpointId]);
    expect(await tenantsInternals(tenants)!.rotationFor('loja-1')).toMatchObject({ step: 'verifying', oldEndpointId: before.endpointId, newEndpointId });
    expect((await tenants.get('loja-1'))?.endpointId).toBe(before.endpointId);

    accepting = true;
    expect((await whileMovingTime(clock, tenants.rotateWebhookSecret('loja-1'))).endpointId).toBe(newEndpointId);
    expect(await endpointsAt(world, apiKey, webhookUrl('loja-1'))).toEqual([newEndpointId]);
  });

  for (const [step, method, pathEnd, left] of [
    ['the new endpoint was registered (its secret never stored)', 'POST', '/webhooks', 'registering'],
    ['its test delivery was asked for', 'POST', '/test', 'verifying'],
    ['the old endpoint was deleted at the service (its secret still held)', 'DELETE', '', 'retiring'],
  ] as const) {
    it(`a process SIGKILLed once ${step}: a second call completes the rotation`, async () => {
      const world = await startWorld();
      const apiKey = world.sandbox.merchants[0]!.keys[0]!.apiKey;
      const tenants = world.tenants();
      const before = await tenants.connect('loja-1', { apiKey });
      let hung = false;
      world.proxy.fault = (request) => {
        if (hung || request.method !== method || !request.path.endsWith(pathEnd)) return undefined;
        hung = true;
        return 'hang';
      };
      expect(await killWhileHung(world, script)).toBe('SIGKILL');

      const internals = tenantsInternals(tenants)!;
      const rotation = await internals.rotationFor('loja-1');
      expect(rotation).toMatchObject({ step: left, oldEndpointId: before.endpointId });
      const at = await endpointsAt(world, apiKey, world.webhookUrl('loja-1'));
      const held = (await internals.secretsFor('loja-1'))!.map((secret) => secret.endpointId);
      if (left === 'registering') {
        // An orphan at the URL whose secret nobody holds; the old secret alone.
        expect(at).toHaveLength(2);
        expect(held).toEqual([before.endpointId]);
      } else if (left === 'verifying') {
        // Both endpoints, both secrets: the receiver verifies either.
        expect(at.sort()).toEqual([before.endpointId, rotation!.newEndpointId].sort());
        expect(held.sort()).toEqual([before.endpointId, rotation!.newEndpointId].sort());
      } else {
        // The old endpoint is gone at the service; deliveries already go to the new one.
        expect(at).toEqual([rotation!.newEndpointId]);
        expect((await tenants.get('loja-1'))?.endpointId).toBe(rotation!.newEndpointId);
      }

      await tenants.rotateWebhookSecret('loja-1');
      const newEndpointId = await expectRotated(world, tenants, apiKey, 'loja-1', before.endpointId!);
      if (left === 'registering') expect(at).not.toContain(newEndpointId); // the orphan went; another was registered
      else expect(newEndpointId).toBe(rotation!.newEndpointId);
    });
  }
});
