// Rotation under load (tenants.md, "What tests must show"): two merchants' orders are created and
// change status continuously while one tenant's secret is rotated, first by a process SIGKILLed
// between the steps, then completed by a second call; or while its key is changed (updateKey: the
// endpoint moves to the new key, both endpoints delivering during the overlap). The receiver is the multi-tenant inbox on a
// real socket and SQLite file. Every event is handled exactly once, none is lost, every delivery
// is answered 2xx, and the old endpoint is gone at the end.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createInbox, type InboxEntry } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import type { OrderStatus } from 'integration-sdk';
import { createTenants } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { onCleanup, startSandbox } from '../e2e/helpers.ts';
import { dir, killWhileHung, newEncryptionKey, startFaultProxy, type World } from './support/fixture.ts';

const script = fileURLToPath(new URL('./support/rotate-process.ts', import.meta.url));
const NEXT: Partial<Record<string, OrderStatus>> = { confirmed: 'preparing', preparing: 'dispatched', dispatched: 'delivered' };
let files = 0;

/** The sandbox (its rate limits on), a fault proxy before it, and an inbox for many merchants on a socket. */
async function loadWorld() {
  const sandbox = await startSandbox({ timeScale: 0.001, merchants: [{}, {}], rate: undefined });
  const proxy = await startFaultProxy(sandbox);
  const answers: { tenant: string; event: string; deliveryId: string; status: number }[] = [];
  let listener: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => {
    res.on('finish', () =>
      answers.push({ tenant: req.url!.split('/').at(-1)!, event: String(req.headers['x-service-event']), deliveryId: String(req.headers['x-service-delivery-id']), status: res.statusCode }),
    );
    listener(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onCleanup(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const webhookUrl = (id: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/integration/${id}`;
  const dbPath = `${dir.path}/under-load-${++files}.db`;
  const encryptionKey = newEncryptionKey();
  const tenants = createTenants({ store: sqliteTenantStore({ path: dbPath }), encryptionKey, baseUrl: proxy.url, webhookUrl, clientOptions: { random: () => 0 } });
  const inbox = createInbox({ tenants, store: sqliteStore({ path: dbPath }) });
  onCleanup(async () => {
    await inbox.close();
    await tenants.close();
  });
  listener = inbox.handler.node;
  // What killWhileHung needs of a World: the file, the key, the proxy and where deliveries go.
  const world = { sandbox, proxy, dbPath, encryptionKey, webhookUrl } as unknown as World;
  return { sandbox, proxy, tenants, inbox, answers, world };
}

/**
 * Orders of both merchants created and moved on, one change every few milliseconds, until
 * `stop()`; what each change must make the inbox run, per tenant.
 */
function startLoad(sandbox: Awaited<ReturnType<typeof startSandbox>>, merchants: { tenant: string; storeId: string }[]) {
  const expected: string[] = [];
  const open: { tenant: string; orderId: string; status: string }[] = [];
  let running = true;
  let step = 0;
  const done = (async () => {
    while (running) {
      const merchant = merchants[step % merchants.length]!;
      const moving = open.find((order) => order.tenant === merchant.tenant && step % 3 !== 0);
      if (moving) {
        const next = NEXT[moving.status]!;
        sandbox.setOrderStatus(moving.orderId, next);
        expected.push(`${moving.tenant} order.status_changed ${moving.orderId} ${moving.status}>${next}`);
        moving.status = next;
        if (!NEXT[next]) open.splice(open.indexOf(moving), 1);
      } else {
        const order = sandbox.createOrder({ store_id: merchant.storeId });
        expected.push(`${merchant.tenant} order.created ${order.order_id}`);
        open.push({ tenant: merchant.tenant, orderId: order.order_id, status: order.status });
      }
      step += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    expected,
    get changes() {
      return step;
    },
    async stop() {
      running = false;
      await done;
    },
  };
}

/** A worker recording each event it runs, as `<tenant> <event> <order> [<previous>><status>]`. */
function startHandling(inbox: ReturnType<typeof createInbox>): string[] {
  const handled: string[] = [];
  const worker = inbox.startWorker({
    concurrency: 4,
    pollMs: 20,
    handlers: {
      'order.created': async (event, ctx) => void handled.push(`${ctx.tenant} order.created ${event.data.order_id}`),
      'order.status_changed': async (event, ctx) =>
        void handled.push(`${ctx.tenant} order.status_changed ${event.data.order_id} ${event.data.previous_status}>${event.data.status}`),
      'webhook.test': async () => {},
    },
  });
  onCleanup(() => worker.stop());
  return handled;
}

/**
 * The load stopped and drained: every event handled exactly once for both tenants, none lost, no
 * answer but 2xx to any delivery of any endpoint; the entries of `tenant` (the overlap was real:
 * some came through both endpoints, the copies stored, never run).
 */
async function expectEachEventOnce(world: Awaited<ReturnType<typeof loadWorld>>, load: ReturnType<typeof startLoad>, handled: string[], tenant: string): Promise<InboxEntry[]> {
  const { sandbox, inbox, answers } = world;
  await load.stop();
  await sandbox.idle();
  await expect.poll(async () => handled.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(load.expected.length);
  await expect.poll(async () => {
    const stats = await inbox.stats();
    return stats.pending + stats.processing;
  }, { timeout: 30_000 }).toBe(0);
  expect([...handled].sort()).toEqual([...load.expected].sort());
  expect(answers.filter((answer) => answer.status < 200 || answer.status > 299)).toEqual([]);
  expect(sandbox.deliveries().filter((delivery) => delivery.status !== 'delivered')).toEqual([]);
  const entries: InboxEntry[] = [];
  for await (const entry of inbox.entries({ tenant })) entries.push(entry);
  expect(entries.filter((entry) => entry.copyOf).length).toBeGreaterThan(0);
  return entries;
}

/**
 * Both merchants connected (loja-a, loja-b, each with its first key), a worker handling their
 * events, and orders and status changes flowing for both: more than 20 changes made already.
 */
async function connectedUnderLoad({ sandbox, tenants, inbox }: Awaited<ReturnType<typeof loadWorld>>) {
  const [a, b] = sandbox.merchants;
  const before = await tenants.connect('loja-a', { apiKey: a!.keys[0]!.apiKey });
  await tenants.connect('loja-b', { apiKey: b!.keys[0]!.apiKey });
  const handled = startHandling(inbox);
  const load = startLoad(sandbox, [
    { tenant: 'loja-a', storeId: a!.storeIds[0]! },
    { tenant: 'loja-b', storeId: b!.storeIds[0]! },
  ]);
  await expect.poll(() => load.changes).toBeGreaterThan(20);
  return { before, handled, load };
}

describe('a secret rotated under load', () => {
  for (const [step, method, pathEnd] of [
    ['verifying', 'POST', '/test'],
    ['retiring', 'DELETE', ''],
  ] as const) {
    it(`handles every event once and answers every delivery 2xx, the rotation killed while ${step} and completed by a second call`, async () => {
      const loaded = await loadWorld();
      const { sandbox, proxy, tenants, world } = loaded;
      const [a] = sandbox.merchants;
      const { before, handled, load } = await connectedUnderLoad(loaded);
      let hung = false;
      proxy.fault = (request) => {
        if (hung || request.method !== method || !request.path.endsWith(pathEnd)) return undefined;
        hung = true;
        return 'hang';
      };
      expect(await killWhileHung(world, script, { TENANTS_ID: 'loja-a' })).toBe('SIGKILL');
      expect((await tenantsInternals(tenants)!.rotationFor('loja-a'))?.step).toBe(step);
      const atKill = load.changes;
      const after = await tenants.rotateWebhookSecret('loja-a');
      // Orders kept flowing during the whole rotation, and go on after it.
      expect(load.changes).toBeGreaterThan(atKill);
      await expect.poll(() => load.changes).toBeGreaterThan(load.changes + 20);
      const entries = await expectEachEventOnce(loaded, load, handled, 'loja-a');
      expect(new Set(entries.map((entry) => entry.verifiedBy))).toEqual(new Set([before.endpointId, after.endpointId]));
      // The old endpoint is gone, and its secret with it.
      const endpoints = await new IntegrationClient({ apiKey: a!.keys[0]!.apiKey, baseUrl: sandbox.url }).webhooks.list();
      expect(endpoints.map((endpoint) => endpoint.id)).toEqual([after.endpointId]);
      expect((await tenantsInternals(tenants)!.secretsFor('loja-a'))!.map((secret) => secret.endpointId)).toEqual([after.endpointId]);
    }, 120_000);
  }
});

describe('a key changed under load', () => {
  it('updateKey while the old key works: every event handled once and answered 2xx through the overlap; the old key\'s endpoint gone, the new key\'s the only one', async () => {
    const loaded = await loadWorld();
    const { sandbox, tenants } = loaded;
    const [a] = sandbox.merchants;
    const old = a!.keys[0]!.apiKey;
    const { before, handled, load } = await connectedUnderLoad(loaded);
    const next = sandbox.addKey(a!.merchantId).apiKey;

    const after = await tenants.updateKey('loja-a', next);

    await expect.poll(() => load.changes).toBeGreaterThan(load.changes + 20);
    const entries = await expectEachEventOnce(loaded, load, handled, 'loja-a');
    expect(new Set(entries.map((entry) => entry.verifiedBy))).toEqual(new Set([before.endpointId, after.endpointId]));
    const listed = async (apiKey: string) => (await new IntegrationClient({ apiKey, baseUrl: sandbox.url }).webhooks.list()).map((endpoint) => endpoint.id);
    expect(await listed(old)).toEqual([]);
    expect(await listed(next)).toEqual([after.endpointId]);
    expect((await tenantsInternals(tenants)!.secretsFor('loja-a'))!.map((secret) => secret.endpointId)).toEqual([after.endpointId]);
  }, 120_000);
});
