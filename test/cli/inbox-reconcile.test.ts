// `integration-sdk inbox reconcile` as a real process against the sandbox. The inbox was filled by a
// receiver on a manual clock set hours back (shared with the sandbox, which moves its retry window
// past in steps), so that in the CLI's real time every order is stale.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createInbox, type InboxStore } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { ManualClock } from '../support/manual-clock.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { runCli, type CliResult } from './helpers.ts';

const HOUR = 3_600_000;
const dir = tempDir('cli-reconcile');
const path = `${dir.path}/inbox.db`;
let sandbox: Sandbox;
let env: Record<string, string>;
let lostId: string;
let orderIds: string[];

const cli = (args: string[], extra: Record<string, string | undefined> = {}): Promise<CliResult> => runCli(['inbox', 'reconcile', ...args], { env: { ...env, ...extra } });

beforeAll(async () => {
  const manual = new ManualClock(Date.now() - 20 * HOUR);
  const clock = { now: () => manual.now(), setTimeout: (callback: () => void, ms: number) => manual.setTimeout(callback, ms) };
  sandbox = await createSandbox({ rate: false, clock: manual });
  env = { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url, INTEGRATION_RATE_LIMIT: 'off' };
  const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const endpoint = await client.webhooks.create({ url: `http://127.0.0.1:${port}/hooks`, events: ['order.created', 'order.status_changed'] });
  const inbox = createInbox({ secret: endpoint.secret, store: sqliteStore({ path }), clock });
  server.on('request', inbox.handler.node);
  const orders = [sandbox.createOrder(), sandbox.createOrder()];
  orderIds = orders.map((order) => order.order_id);
  await sandbox.idle();
  // The receiver down past the retry window while an order is dispatched.
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  sandbox.setOrderStatus(orders[0]!.order_id, 'dispatched');
  lostId = sandbox.deliveries({ event: 'order.status_changed' })[0]!.id;
  for (const [index, seconds] of [60, 300, 1800, 7200, 43200].entries()) {
    await sandbox.waitForDelivery(lostId, (d) => d.status === 'retrying' && d.attempt_count === index + 1);
    manual.advance(seconds * 1000);
  }
  expect((await sandbox.waitForDelivery(lostId)).status).toBe('dead');
  await inbox.close();
}, 60_000);

afterAll(async () => {
  await sandbox.close();
  dir.remove();
});

describe('integration-sdk inbox reconcile', () => {
  test('recovers the missed status change, lists the dead delivery in --json, exit 1; a second run reads nothing again', async () => {
    const result = await cli(['--store', path, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ordersChecked: number; statusChanges: number; createdRecovered: number; notFound: number; missed: Array<{ deliveryId: string; status: string; lastError: string }> };
    expect(report).toMatchObject({ ordersChecked: 2, statusChanges: 1, createdRecovered: 0, notFound: 0 });
    expect(report.missed).toEqual([expect.objectContaining({ deliveryId: lostId, event: 'order.status_changed', status: 'dead', attemptCount: 6, givesUpAt: null, lastError: expect.stringMatching(/connection refused/) })]);

    const store: InboxStore = sqliteStore({ path });
    // No worker ran here: the two order.created wait beside the recovered change.
    const pending = (await store.list({ status: 'pending', limit: 10 })).filter((entry) => entry.event === 'order.status_changed');
    expect(pending).toEqual([expect.objectContaining({ orderId: orderIds[0] })]);
    expect(JSON.parse((await store.get(pending[0]!.id))!.payload!)).toMatchObject({ source: 'reconcile', data: { previous_status: 'confirmed', status: 'dispatched' } });
    await store.close();

    const again = await cli(['--store', path, '--stale-after', '60', '--max-reads', '500']);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/Read back 0 orders/);
    expect(again.stdout).toContain(`${lostId}  order.status_changed  dead after 6 attempts`);
    expect(again.stdout).toMatch(/What to do: fix the receiver/);
    const stats = await runCli(['inbox', 'stats', '--store', path, '--json'], { env });
    expect(JSON.parse(stats.stdout)).toMatchObject({ missed: 1 });
    // doctor --store shows what the last run found.
    const doctor = await runCli(['doctor', '--store', path], { env });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(new RegExp(`fail\\s+inbox reconcile\\s+last run \\S+: 1 deliveries never reached the inbox \\(1 dead, 0 retrying\\): ${lostId} \\(order.status_changed, dead\\)`));
    // Nothing of the order's payload is printed.
    expect(again.stdout + result.stdout + doctor.stdout).not.toMatch(/Maria|maria\.silva|Paulista/);
  }, 30_000);

  test('exit 0 when nothing was missed; exit 2 without a store or a key', async () => {
    const clean = await createSandbox({ rate: false });
    const empty = `${dir.path}/empty.db`;
    const store = sqliteStore({ path: empty });
    await store.migrate();
    await store.close();
    try {
      const result = await cli(['--store', empty], { INTEGRATION_BASE_URL: clean.url, INTEGRATION_API_KEY: clean.apiKey });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/No missed deliveries/);
      const doctor = await runCli(['doctor', '--store', empty], { env: { ...env, INTEGRATION_BASE_URL: clean.url, INTEGRATION_API_KEY: clean.apiKey } });
      expect(doctor.stdout).toMatch(/ok\s+inbox reconcile\s+last run \S+: no missed deliveries/);
      // The service failing throughout: it could not run (2), not "deliveries were missed" (1).
      clean.setFaults({ rate: 1, kinds: ['error500'] });
      const failing = await cli(['--store', empty], { INTEGRATION_BASE_URL: clean.url, INTEGRATION_API_KEY: clean.apiKey });
      expect(failing.code).toBe(2);
      expect(failing.stderr).toMatch(/Reconcile stopped/);
    } finally {
      await clean.close();
    }
    expect((await cli(['--store', `${dir.path}/missing.db`])).code).toBe(2);
    const noKey = await cli(['--store', path], { INTEGRATION_API_KEY: undefined });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/INTEGRATION_API_KEY/);
    expect((await cli(['--store', path, '--max-reads', '-1'])).code).toBe(2);
    expect((await runCli(['inbox', 'reconcile', '--help'])).stdout).toMatch(/Example:\n\s+integration-sdk inbox reconcile --store/);
  }, 30_000);
});
