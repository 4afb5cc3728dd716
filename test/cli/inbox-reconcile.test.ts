// `integration-sdk inbox reconcile` as a real process against the sandbox. The inbox was filled by a
// receiver on a manual clock set hours back (shared with the sandbox, which moves its retry window
// past in steps), so that in the CLI's real time every order is stale.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createInbox, type InboxStore, type ReconcileReport } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { ManualClock } from '../support/manual-clock.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { runCli, type CliResult } from './helpers.ts';

const HOUR = 3_600_000;
const dir = tempDir('cli-reconcile');
const path = `${dir.path}/inbox.db`;
let sandbox: Sandbox;
let manual: ManualClock;
let env: Record<string, string>;
let lostId: string;
let orderIds: string[];
let ownId: string;
let otherId: string;

const cli = (args: string[], extra: Record<string, string | undefined> = {}): Promise<CliResult> => runCli(['inbox', 'reconcile', ...args], { env: { ...env, ...extra } });

/** Moves the sandbox's time through the retry schedule until `id` is dead (the receiver being down). */
async function outlastRetries(id: string): Promise<void> {
  for (const [index, seconds] of [60, 300, 1800, 7200, 43200].entries()) {
    await sandbox.waitForDelivery(id, (d) => d.status === 'retrying' && d.attempt_count === index + 1);
    manual.advance(seconds * 1000);
  }
  expect((await sandbox.waitForDelivery(id)).status).toBe('dead');
}

beforeAll(async () => {
  manual = new ManualClock(Date.now() - 20 * HOUR);
  const clock = { now: () => manual.now(), setTimeout: (callback: () => void, ms: number) => manual.setTimeout(callback, ms) };
  sandbox = await createSandbox({ rate: false, clock: manual });
  env = { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url, INTEGRATION_RATE_LIMIT: 'off' };
  const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const endpoint = await client.webhooks.create({ url: `http://127.0.0.1:${port}/hooks`, events: ['order.created', 'order.status_changed'] });
  ownId = endpoint.id;
  // Another endpoint of the key (a retired receiver, nothing listens there): its deliveries all die.
  otherId = (await client.webhooks.create({ url: 'http://127.0.0.1:9/retired', events: ['order.created', 'order.status_changed'] })).id;
  const inbox = createInbox({ secret: endpoint.secret, store: sqliteStore({ path }), clock });
  server.on('request', inbox.handler.node);
  const orders = [sandbox.createOrder(), sandbox.createOrder()];
  orderIds = orders.map((order) => order.order_id);
  // Not sandbox.idle(): the other endpoint's deliveries retry on the manual clock.
  for (const delivery of sandbox.deliveries({ webhookId: ownId })) expect((await sandbox.waitForDelivery(delivery.id, (d) => d.status !== 'pending')).status).toBe('delivered');
  // The receiver down past the retry window while an order is dispatched.
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  sandbox.setOrderStatus(orders[0]!.order_id, 'dispatched');
  lostId = sandbox.deliveries({ event: 'order.status_changed', webhookId: ownId })[0]!.id;
  await outlastRetries(lostId);
  await inbox.close();
}, 60_000);

afterAll(async () => {
  await sandbox.close();
  dir.remove();
});

describe('integration-sdk inbox reconcile', () => {
  test("recovers the missed status change by reading and lists it, exit 1; the other endpoint's dead deliveries never count; a second run exits 0", async () => {
    const result = await cli(['--store', path, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as ReconcileReport;
    expect(report).toMatchObject({ ordersChecked: 2, statusChanges: 1, createdRecovered: 0, notFound: 0, missed: [], newMissed: [lostId], endpointIds: [ownId], endpointsGuessed: true });
    expect(report.recovered).toEqual([expect.objectContaining({ deliveryId: lostId, event: 'order.status_changed', status: 'dead', attemptCount: 6, givesUpAt: null, lastError: expect.stringMatching(/connection refused/) })]);
    expect(report.otherEndpoints).toEqual([{ id: otherId, url: 'http://127.0.0.1:9/retired', consecutiveFailures: expect.any(Number) }]);
    expect(sandbox.deliveries({ webhookId: otherId }).filter((delivery) => delivery.status === 'dead' || delivery.status === 'retrying')).toHaveLength(3);

    const store: InboxStore = sqliteStore({ path });
    // No worker ran here: the two order.created wait beside the recovered change.
    const pending = (await store.list({ status: 'pending', limit: 10 })).filter((entry) => entry.event === 'order.status_changed');
    expect(pending).toEqual([expect.objectContaining({ orderId: orderIds[0] })]);
    expect(JSON.parse((await store.get(pending[0]!.id))!.payload!)).toMatchObject({ source: 'reconcile', data: { previous_status: 'confirmed', status: 'dispatched' } });
    await store.close();

    // After the recovery a scheduler's next run is quiet.
    const again = await cli(['--store', path, '--stale-after', '60', '--max-reads', '500']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Read back 0 orders/);
    expect(again.stdout).toMatch(/No missed deliveries open\./);
    expect(again.stdout).toContain(`Not this inbox's, not counted: endpoint ${otherId} http://127.0.0.1:9/retired`);
    const stats = await runCli(['inbox', 'stats', '--store', path, '--json'], { env });
    expect(JSON.parse(stats.stdout)).toMatchObject({ missed: 0 });
    const doctor = await runCli(['doctor', '--store', path], { env });
    expect(doctor.stdout).toMatch(/ok\s+inbox reconcile\s+last run \S+: no missed deliveries open/);
    // Nothing of the order's payload is printed.
    expect(again.stdout + result.stdout + doctor.stdout).not.toMatch(/Maria|maria\.silva|Paulista/);
  }, 30_000);

  test('a missed order.created stays open (exit 1, doctor fails, with what to do) until --ack, recorded with who and when', async () => {
    sandbox.createOrder(); // the receiver is still down: its order.created dies, and the inbox never hears of the order
    const createdId = sandbox.deliveries({ event: 'order.created', webhookId: ownId })[0]!.id;
    await outlastRetries(createdId);
    for (let run = 0; run < 2; run += 1) {
      const result = await cli(['--store', path]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`1 missed deliveries open (${run === 0 ? 1 : 0} found this run):`);
      expect(result.stdout).toContain(`${createdId}  order.created  dead after 6 attempts`);
      expect(result.stdout).toMatch(/What to do: 1 order\.created delivery never arrived \(emitted at \S+\): .*Look for orders created at that time in the platform's dashboard/);
    }
    const doctor = await runCli(['doctor', '--store', path], { env });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(new RegExp(`fail\\s+inbox reconcile\\s+last run \\S+: 1 missed delivery open \\(1 dead, 0 retrying\\): ${createdId} \\(order.created, dead\\)`));

    const ack = await cli(['--store', path, '--ack', createdId, '--json']);
    expect(ack.code).toBe(0);
    expect(JSON.parse(ack.stdout)).toMatchObject({ acknowledged: 1, by: expect.stringContaining('(command line)'), open: 0 });
    expect((await cli(['--store', path, '--ack', createdId])).code).toBe(1);
    const store = sqliteStore({ path });
    expect((await store.listMissed!({ open: false, limit: 10 })).find((missed) => missed.deliveryId === createdId)!.ended).toMatchObject({ how: 'acknowledged', by: expect.stringContaining('(command line)') });
    await store.close();
    const quiet = await cli(['--store', path]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/No missed deliveries open\./);
  }, 60_000);

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
      expect(doctor.stdout).toMatch(/ok\s+inbox reconcile\s+last run \S+: no missed deliveries open/);
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
