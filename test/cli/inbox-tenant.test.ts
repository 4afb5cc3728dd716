// `integration-sdk inbox stats | dead | retry | retry-dead --tenant <id>`: one tenant's entries of an
// inbox of many merchants; without --tenant, every tenant's. A --tenant that cannot be a tenant id
// is refused with the rule it breaks (exit 2).
import { afterAll, expect, test } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { runCli } from './helpers.ts';

const dir = tempDir('cli-inbox-tenant');
afterAll(() => dir.remove());

test("inbox commands with --tenant read and retry that tenant's entries only", async () => {
  const path = `${dir.path}/tenants.db`;
  const store = sqliteStore({ path });
  let n = 0;
  for (const tenant of ['loja-a', 'loja-a', 'loja-b']) {
    const deliveryId = `dead-${++n}`;
    await store.insert({ tenant, deliveryId, event: 'order.created', orderId: `o-${n}`, ts: 1, payload: '{}', known: true, receivedAt: 1000 + n, status: 'dead', lastError: 'Error: ERP down' });
  }
  // The same delivery id under another tenant is another entry.
  await store.insert({ tenant: 'loja-b', deliveryId: 'dead-1', event: 'order.created', orderId: 'o-9', ts: 1, payload: '{}', known: true, receivedAt: 2000, status: 'dead', lastError: 'Error: ERP down' });
  await store.close();

  const stats = await runCli(['inbox', 'stats', '--store', path, '--tenant', 'loja-a', '--json']);
  expect(stats.code).toBe(1);
  expect(JSON.parse(stats.stdout)).toMatchObject({ received: 2, dead: 2 });
  expect(JSON.parse((await runCli(['inbox', 'stats', '--store', path, '--json'])).stdout)).toMatchObject({ received: 4, dead: 4 });
  const dead = await runCli(['inbox', 'dead', '--store', path, '--tenant', 'loja-b', '--json']);
  expect((JSON.parse(dead.stdout) as Array<{ deliveryId: string }>).map((row) => row.deliveryId)).toEqual(['dead-3', 'dead-1']);

  const retried = await runCli(['inbox', 'retry', 'dead-1', '--store', path, '--tenant', 'loja-b', '--json']);
  expect([retried.code, JSON.parse(retried.stdout)]).toEqual([0, { retried: true, delivery_id: 'dead-1' }]);
  expect(JSON.parse((await runCli(['inbox', 'stats', '--store', path, '--tenant', 'loja-a', '--json'])).stdout)).toMatchObject({ dead: 2, pending: 0 });
  const all = await runCli(['inbox', 'retry-dead', '--store', path, '--tenant', 'loja-a']);
  expect([all.code, all.stdout.trim()]).toEqual([0, '2 dead entries are pending again.']);
  expect(JSON.parse((await runCli(['inbox', 'stats', '--store', path, '--json'])).stdout)).toMatchObject({ dead: 1, pending: 3 });

  const refused = await runCli(['inbox', 'stats', '--store', path, '--tenant', 'loja/42']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/--tenant contains "\/": it must be a single URL path segment/);
}, 60_000);
