// A SQLite file written by the version before many merchants (issue 28): migrate() rebuilds its
// tables keyed by tenant, and the single-merchant inbox it holds goes on unchanged.
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { LATE_DISPATCHED, OLD_ROWS, OLD_SQLITE_SCHEMA, T0 } from '../support/before-tenants.ts';
import { tempDir } from '../support/temp-dir.ts';

const dir = tempDir('inbox-sqlite-tenants-migration');
afterAll(() => dir.remove());

describe('sqliteStore on a database of the version before tenants', () => {
  it('keeps its entries, orders, covers and misses as the single merchant\'s, and then keeps tenants apart', async () => {
    const path = `${dir.path}/before-tenants.db`;
    const old = new DatabaseSync(path);
    old.exec(OLD_SQLITE_SCHEMA);
    for (const row of OLD_ROWS) old.exec(row.replaceAll('TRUE', '1'));
    old.close();

    const store = sqliteStore({ path });
    await store.migrate();
    expect(await store.get('e-1')).toMatchObject({ tenant: null, status: 'done', orderId: 'o-1', verifiedBy: null, copyOf: null });
    expect((await store.page!({ limit: 10, search: '#101' })).map((each) => each.id)).toEqual(['e-1']);
    expect(await store.insert({ deliveryId: 'e-1', event: 'order.created', orderId: 'o-1', ts: 100, payload: '{}', known: true, receivedAt: T0 + 40 })).toBe('duplicate');
    // What o-1 has had is kept: the real delivery of the status a reconcile brought is covered.
    await store.insert(LATE_DISPATCHED);
    expect(await store.get('e-3')).toMatchObject({ status: 'done', attempts: 0 });
    expect(await store.staleOrders!({ seenBefore: T0 + 100, checkedBefore: T0 + 100, finalStatuses: [], limit: 10 })).toMatchObject([
      { orderId: 'o-2', status: 'confirmed' },
      { orderId: 'o-1', status: 'dispatched', version: 3 },
    ]);
    expect(await store.listMissed!({ open: true, limit: 10 })).toMatchObject([{ deliveryId: 'm-1', endpointId: 'ep-1' }]);
    expect(await store.lastReconcile!()).toMatchObject({ ranAt: T0 + 30, endpointIds: ['ep-1'] });
    const [claimed] = await store.claim({ workerId: 'w', now: T0 + 50, leaseMs: 1000, limit: 10, orderWaitMs: 0 });
    expect(claimed).toMatchObject({ id: 'e-2', tenant: null });
    // Sequence numbers go on from the old table's.
    expect(await store.insert({ deliveryId: 'e-1', tenant: 'loja-a', event: 'order.created', orderId: 'o-1', ts: 100, payload: '{}', known: true, receivedAt: T0 + 60 })).toBe('stored');
    expect(await store.stats(T0 + 60, { tenant: 'loja-a' })).toMatchObject({ received: 1, pending: 1 });
    expect((await store.stats(T0 + 60)).received).toBe(5);
    await store.close();

    const again = sqliteStore({ path });
    await again.migrate();
    expect((await again.stats(T0 + 60)).received).toBe(5);
    await again.close();
    const check = new DatabaseSync(path);
    const indexes = (check.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'inbox_entries' AND sql IS NOT NULL`).all() as { name: string }[]).map((row) => row.name);
    expect(indexes.sort()).toEqual(
      [
        'inbox_entries_display_number', 'inbox_entries_external_order', 'inbox_entries_finished', 'inbox_entries_invalid', 'inbox_entries_leased', 'inbox_entries_order',
        'inbox_entries_rare_event_received', 'inbox_entries_received', 'inbox_entries_runnable', 'inbox_entries_status_received', 'inbox_entries_tenant_due', 'inbox_entries_tenant_status',
      ].sort(),
    );
    check.close();
  });
});
