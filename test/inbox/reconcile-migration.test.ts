/**
 * A database written before the inbox kept per-order state gets it on migrate(), from the entries
 * it still holds: the status of each order's latest change (an order.created's while none is known),
 * when its last event arrived, whether its order.created is there. Payloads purged or unreadable
 * give an unknown status, never a failed migration.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { InboxStore, NewInboxEntry } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { usePostgres } from './support/postgres.ts';
import { tempDir } from './support/temp-dir.ts';

const postgres = usePostgres();
const dir = tempDir('inbox-reconcile-migration');
afterAll(() => dir.remove());

const T0 = 1_800_000_000_000;
let n = 0;
const event = (orderId: string, name: string, status: string, ts: number, receivedAt: number, payload?: string): NewInboxEntry => ({
  deliveryId: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
  event: name,
  orderId,
  ts,
  payload: payload ?? JSON.stringify({ event: name, data: { order_id: orderId, status } }),
  known: true,
  receivedAt,
});

const ENTRIES = [
  event('o-1', 'order.created', 'confirmed', 100, T0),
  event('o-1', 'order.status_changed', 'cancelled', 300, T0 + 30),
  event('o-1', 'order.status_changed', 'preparing', 200, T0 + 40),
  event('o-2', 'order.status_changed', 'preparing', 100, T0 + 10),
  event('o-3', 'order.created', 'confirmed', 100, T0 + 20),
  event('o-4', 'order.status_changed', 'dispatched', 100, T0 + 50, '{not json'),
];

const EXPECTED = [
  { orderId: 'o-1', status: 'cancelled', statusTs: 300, lastEventAt: T0 + 40, checkedAt: null, hasCreated: true },
  { orderId: 'o-2', status: 'preparing', statusTs: 100, lastEventAt: T0 + 10, checkedAt: null, hasCreated: false },
  { orderId: 'o-3', status: null, statusTs: 0, lastEventAt: T0 + 20, checkedAt: null, hasCreated: true },
  { orderId: 'o-4', status: null, statusTs: 0, lastEventAt: T0 + 50, checkedAt: null, hasCreated: false },
];

async function backfilled(open: () => InboxStore, forget: (purgedId: string) => Promise<void>) {
  const before = open();
  await before.migrate();
  for (const entry of ENTRIES) await before.insert(entry);
  await before.close();
  // As an earlier version left it: no reconciliation tables, and o-3's payload already purged.
  await forget(ENTRIES[4]!.deliveryId);
  const after = open();
  await after.migrate();
  const states = await after.staleOrders!({ seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: Number.MAX_SAFE_INTEGER, finalStatuses: [], limit: 10 });
  // Migrating again changes nothing.
  await after.close();
  const again = open();
  await again.migrate();
  expect(await again.staleOrders!({ seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: Number.MAX_SAFE_INTEGER, finalStatuses: [], limit: 10 })).toEqual(states);
  await again.close();
  return [...states].sort((a, b) => a.orderId.localeCompare(b.orderId));
}

describe('per-order state backfilled from the entries of an existing database', () => {
  it('sqliteStore', async () => {
    const path = `${dir.path}/old.db`;
    const states = await backfilled(
      () => sqliteStore({ path }),
      async (purgedId) => {
        const database = new DatabaseSync(path);
        database.exec('DROP TABLE inbox_orders; DROP TABLE inbox_reconciled; DROP TABLE inbox_reconcile_runs');
        database.prepare('UPDATE inbox_entries SET payload = NULL WHERE delivery_id = ?').run(purgedId);
        database.close();
      },
    );
    expect(states).toEqual(EXPECTED);
  });

  it('postgresStore', async () => {
    const schema = `reconcile_migration_${process.pid}`;
    const states = await backfilled(
      () => postgresStore({ connectionString: postgres.current.url, schema }),
      async (purgedId) => {
        const client = new pg.Client({ connectionString: postgres.current.url });
        await client.connect();
        await client.query(`DROP TABLE "${schema}".inbox_orders, "${schema}".inbox_reconciled, "${schema}".inbox_reconcile_runs`);
        await client.query(`UPDATE "${schema}".inbox_entries SET payload = NULL WHERE delivery_id = $1`, [purgedId]);
        await client.end();
      },
    );
    expect(states).toEqual(EXPECTED);
  });
});
