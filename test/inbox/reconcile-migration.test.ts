/**
 * A database written before the inbox kept per-order state gets it on migrate(), from the entries
 * it still holds: the status of each order's latest change (an order.created's while none is known),
 * when its last event arrived, whether its order.created is there, and what each order has had
 * (versions, covers). Payloads purged or unreadable give an unknown status, never a failed
 * migration. A database of the version before "a status handled once" (per-order state, covers
 * keyed by status in inbox_reconciled) gets what each order has had from its entries too.
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
  { orderId: 'o-1', status: 'cancelled', statusTs: 300, lastEventAt: T0 + 40, checkedAt: null, hasCreated: true, version: 3 },
  { orderId: 'o-2', status: 'preparing', statusTs: 100, lastEventAt: T0 + 10, checkedAt: null, hasCreated: false, version: 1 },
  { orderId: 'o-3', status: null, statusTs: 0, lastEventAt: T0 + 20, checkedAt: null, hasCreated: true, version: 1 },
  { orderId: 'o-4', status: null, statusTs: 0, lastEventAt: T0 + 50, checkedAt: null, hasCreated: false, version: 1 },
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
        database.exec('DROP TABLE inbox_orders; DROP TABLE inbox_order_statuses; DROP TABLE inbox_reconcile_runs; DROP TABLE inbox_missed');
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
        await client.query(`DROP TABLE "${schema}".inbox_orders, "${schema}".inbox_order_statuses, "${schema}".inbox_reconcile_runs, "${schema}".inbox_missed`);
        await client.query(`UPDATE "${schema}".inbox_entries SET payload = NULL WHERE delivery_id = $1`, [purgedId]);
        await client.end();
      },
    );
    expect(states).toEqual(EXPECTED);
  });
});

const change = (orderId: string, previous: string, status: string, ts: number, source?: 'reconcile'): NewInboxEntry => ({
  ...event(orderId, 'order.status_changed', status, ts, T0 + ts),
  payload: JSON.stringify({ event: 'order.status_changed', data: { order_id: orderId, previous_status: previous, status }, ...(source && { source }) }),
  ...(source && { source }),
});

const MISSED = { deliveryId: 'd-lost', event: 'order.created', status: 'dead', endpointId: 'w-1', lastError: 'connection refused', createdAt: '2027-01-15T08:00:00.000Z', attemptCount: 6, givesUpAt: null };

/**
 * Entries as the previous version left them, then that version's tables: o-p1's reconciled change
 * still waits for its real delivery (in the service's retries); o-p2's arrived and was covered.
 */
async function fromPreviousVersion(open: () => InboxStore, toPreviousShape: () => Promise<void>) {
  const before = open();
  await before.migrate();
  for (const orderId of ['o-p1', 'o-p2']) {
    await before.insert(event(orderId, 'order.created', 'confirmed', 100, T0));
    await before.insert(change(orderId, 'confirmed', 'dispatched', 200, 'reconcile'));
  }
  await before.insert(change('o-p2', 'preparing', 'dispatched', 300));
  // Its last reconcile listed a delivery that never arrived.
  await before.saveReconcile!({ ranAt: T0 + 500, missed: [MISSED] });
  await before.close();
  await toPreviousShape();
  const after = open();
  await after.migrate();
  try {
    const states = await after.staleOrders!({ seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: Number.MAX_SAFE_INTEGER, finalStatuses: [], limit: 10 });
    expect(states.map((state) => [state.orderId, state.status, state.version]).sort()).toEqual([['o-p1', 'dispatched', 2], ['o-p2', 'dispatched', 3]]);
    // o-p1's late real delivery is the reconciled change: covered. o-p2's was covered already: another runs.
    const late = change('o-p1', 'preparing', 'dispatched', 400);
    const another = change('o-p2', 'preparing', 'dispatched', 400);
    await after.insert(late);
    await after.insert(another);
    expect(await after.get(late.deliveryId)).toMatchObject({ status: 'done', attempts: 0 });
    expect(await after.get(another.deliveryId)).toMatchObject({ status: 'pending' });
    // That miss is kept open, found when that reconcile ran; the record counted every endpoint.
    expect(await after.listMissed!({ open: true, limit: 10 })).toEqual([{ ...MISSED, firstSeenAt: T0 + 500, ended: null }]);
    expect(await after.lastReconcile!()).toEqual({ ranAt: T0 + 500, missed: [MISSED] });
  } finally {
    await after.close();
  }
}

describe("what each order has had, from the entries of the previous version's database", () => {
  it('sqliteStore', async () => {
    const path = `${dir.path}/previous.db`;
    await fromPreviousVersion(
      () => sqliteStore({ path }),
      async () => {
        const database = new DatabaseSync(path);
        database.exec(`DROP TABLE inbox_order_statuses; ALTER TABLE inbox_orders DROP COLUMN version; ALTER TABLE inbox_orders DROP COLUMN created_cover;
          DROP TABLE inbox_missed; ALTER TABLE inbox_reconcile_runs DROP COLUMN endpoint_ids;
          CREATE TABLE inbox_reconciled (order_id TEXT NOT NULL, event TEXT NOT NULL, status TEXT NOT NULL, delivery_id TEXT NOT NULL, PRIMARY KEY (order_id, event, status))`);
        database.close();
      },
    );
  });

  it('postgresStore', async () => {
    const schema = `reconcile_previous_${process.pid}`;
    await fromPreviousVersion(
      () => postgresStore({ connectionString: postgres.current.url, schema }),
      async () => {
        const client = new pg.Client({ connectionString: postgres.current.url });
        await client.connect();
        await client.query(`DROP TABLE "${schema}".inbox_order_statuses`);
        await client.query(`ALTER TABLE "${schema}".inbox_orders DROP COLUMN version, DROP COLUMN created_cover`);
        await client.query(`DROP TABLE "${schema}".inbox_missed`);
        await client.query(`ALTER TABLE "${schema}".inbox_reconcile_runs DROP COLUMN endpoint_ids`);
        await client.query(`CREATE TABLE "${schema}".inbox_reconciled (order_id TEXT NOT NULL, event TEXT NOT NULL, status TEXT NOT NULL, delivery_id TEXT NOT NULL, PRIMARY KEY (order_id, event, status))`);
        await client.end();
      },
    );
  });
});
