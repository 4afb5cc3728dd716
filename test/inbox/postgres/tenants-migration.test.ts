// A Postgres schema written by the version before many merchants (issue 28): migrate() adds the
// tenant to its tables and keys, and the single-merchant inbox it holds goes on unchanged.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { LATE_DISPATCHED, OLD_ROWS, oldPostgresSchema, T0 } from '../support/before-tenants.ts';
import { usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();

describe('postgresStore on a schema of the version before tenants', () => {
  it("keeps its entries, orders, covers and misses as the single merchant's, and then keeps tenants apart", async () => {
    const schema = `before_tenants_${process.pid}`;
    const pool = new pg.Pool({ connectionString: postgres.current.url });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    for (const statement of oldPostgresSchema(schema)) await pool.query(statement);
    await pool.query(`SET search_path TO "${schema}"`);
    const client = await pool.connect();
    await client.query(`SET search_path TO "${schema}"`);
    for (const row of OLD_ROWS) await client.query(row);
    client.release();

    const store = postgresStore({ connectionString: postgres.current.url, schema });
    try {
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
      expect(await store.insert({ deliveryId: 'e-1', tenant: 'loja-a', event: 'order.created', orderId: 'o-1', ts: 100, payload: '{}', known: true, receivedAt: T0 + 60 })).toBe('stored');
      expect(await store.stats(T0 + 60, { tenant: 'loja-a' })).toMatchObject({ received: 1, pending: 1 });
      expect((await store.stats(T0 + 60)).received).toBe(5);
      const { rows } = await pool.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'inbox_entries'`, [schema]);
      const names = rows.map((row) => row.indexname);
      expect(names).not.toEqual(expect.arrayContaining(['inbox_entries_delivery_key']));
      expect(names).not.toEqual(expect.arrayContaining(['inbox_entries_pending']));
      expect(names).toEqual(expect.arrayContaining(['inbox_entries_delivery_tenant_key', 'inbox_entries_tenant_due', 'inbox_entries_tenant_status']));
    } finally {
      await store.close();
      await pool.end();
    }
    const again = postgresStore({ connectionString: postgres.current.url, schema });
    await again.migrate();
    expect((await again.stats(T0 + 60)).received).toBe(5);
    await again.close();
  });
});
