import { describe, expect, it } from 'vitest';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { testPool, usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();

describe('postgresStore on a database an earlier version wrote', () => {
  it('migrates the 0.1 table (integer ts, btree unique id and order index, no schema_issues) and then stores what it refused', async () => {
    const schema = `old_${process.pid}`;
    const table = `"${schema}".inbox_entries`;
    const pool = testPool(postgres.current.url);
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE ${table} (
      seq BIGSERIAL PRIMARY KEY, delivery_id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, order_id TEXT, ts BIGINT NOT NULL, payload TEXT,
      known BOOLEAN NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, received_at BIGINT NOT NULL,
      next_attempt_at BIGINT NOT NULL, lease_owner TEXT, lease_until BIGINT, finished_at BIGINT)`);
    await pool.query(`CREATE INDEX inbox_entries_order ON ${table} (order_id, ts, seq)`);
    await pool.query(`INSERT INTO ${table} (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at) VALUES ('old-1', 'order.created', 'o-1', 1, '{}', true, 'pending', 5, 5)`);
    await pool.end();

    const store = postgresStore({ connectionString: postgres.current.url, schema });
    try {
      await store.migrate();
      expect(await store.get('old-1')).toMatchObject({ status: 'pending', ts: 1, schemaIssues: null });
      expect(await store.insert({ deliveryId: 'old-1', event: 'order.created', orderId: 'o-1', ts: 1, payload: '{}', known: true, receivedAt: 6 })).toBe('duplicate');
      const odd = [
        { deliveryId: 'new-1', event: 'order.created', orderId: 'o-\u0000', ts: 1_700_000_000.25, payload: '{}', known: true, receivedAt: 7, schemaIssues: ['data.metadata'] },
        { deliveryId: `new-${'x'.repeat(4000)}`, event: 'order.created', orderId: 'y'.repeat(4000), ts: 1e300, payload: '{}', known: true, receivedAt: 8 },
      ];
      for (const entry of odd) expect(await store.insert(entry)).toBe('stored');
      for (const entry of odd) expect(await store.get(entry.deliveryId)).toMatchObject({ orderId: entry.orderId, ts: entry.ts });
      expect(await store.stats(10)).toMatchObject({ received: 3, invalidPayload: 1 });
    } finally {
      await store.close();
    }
  });
});
