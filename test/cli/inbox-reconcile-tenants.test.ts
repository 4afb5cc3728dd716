// `integration-sdk inbox reconcile --tenants <location>` as a real process, on an inbox of many
// merchants against the sandbox: every active tenant reconciled through its own key, exit 1 while a
// tenant's miss is open, 0 once it is acknowledged, 2 when a tenant could not be reconciled. And
// `doctor --store` on that inbox counts the tenants' open misses (not the single merchant's only).
import { expect, it } from 'vitest';
import type { TenantsReconcileReport } from 'integration-sdk/inbox';
import { tenantsWorld } from '../inbox/support/tenants-world.ts';
import { runCli } from './helpers.ts';

it("reconciles every tenant of the registry, exits 1 while a tenant's miss is open, and doctor --store fails on it", async () => {
  // Time at the service's pace: the dead-receiver's delivery is retried a minute later, after the test.
  const world = await tenantsWorld({ merchants: 2, sandbox: { timeScale: 1 } });
  const [a, b] = world.sandbox.merchants;
  await world.tenants.connect('loja-a', { apiKey: a!.keys[0]!.apiKey });
  await world.tenants.connect('loja-b', { apiKey: b!.keys[0]!.apiKey });
  world.sandbox.createOrder({ store_id: b!.storeIds[0]! });
  await world.sandbox.idle();
  // loja-a's receiver is down: its order.created is retrying, never stored.
  world.intercept((req, res) => (req.url?.endsWith('/loja-a') ? (res.writeHead(503).end(), true) : false));
  world.sandbox.createOrder({ store_id: a!.storeIds[0]! });
  await expect.poll(() => world.sandbox.deliveries({ event: 'order.created' }).filter((delivery) => delivery.status === 'retrying').length).toBe(1);
  world.intercept(undefined);
  const env = { INTEGRATION_TENANTS_KEY: world.encryptionKey, INTEGRATION_BASE_URL: world.sandbox.url, INTEGRATION_RATE_LIMIT: 'off' };

  const run = await runCli(['inbox', 'reconcile', '--store', world.path, '--tenants', world.path, '--stale-after', '0', '--json'], { env });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(1);
  const report = JSON.parse(run.stdout) as TenantsReconcileReport;
  expect(report.tenants.map((each) => each.tenant)).toEqual(['loja-a', 'loja-b']);
  expect(report.tenants.map((each) => each.ordersChecked)).toEqual([0, 1]);
  expect(report.missed).toMatchObject([{ tenant: 'loja-a', event: 'order.created', status: 'retrying' }]);
  expect(report.failed).toEqual([]);

  const doctor = await runCli(['doctor', '--store', world.path], { env: { ...env, INTEGRATION_API_KEY: b!.keys[0]!.apiKey } });
  expect(doctor.stdout).toMatch(new RegExp(`^fail\\s+inbox reconcile\\s+last run \\S+: 1 missed delivery open \\(0 dead, 1 retrying\\): ${report.missed[0]!.deliveryId} \\(tenant loja-a, order\\.created, retrying\\)`, 'm'));
  expect(doctor.code).toBe(1);

  // Acknowledged, nothing is open: exit 0 (text output this time).
  expect((await runCli(['inbox', 'reconcile', '--store', world.path, '--ack', report.missed[0]!.deliveryId], { env })).code).toBe(0);
  const clean = await runCli(['inbox', 'reconcile', '--store', world.path, '--tenants', world.path, '--stale-after', '0'], { env });
  expect(clean.stdout).toMatch(/^Reconciled 2 tenants \(\d+ requests\):$/m);
  expect(clean.stdout).toContain('No missed deliveries open.');
  expect(clean.code).toBe(0);

  // A tenant whose key the service refuses is listed; the other is reconciled; exit 2.
  world.sandbox.revokeKey(a!.keys[0]!.apiKey);
  const refused = await runCli(['inbox', 'reconcile', '--store', world.path, '--tenants', world.path, '--stale-after', '0', '--json'], { env });
  const partial = JSON.parse(refused.stdout) as TenantsReconcileReport;
  expect(partial.failed.map((each) => each.tenant)).toEqual(['loja-a']);
  expect(partial.tenants.map((each) => each.tenant)).toEqual(['loja-b']);
  expect(refused.code).toBe(2);
}, 60_000);
