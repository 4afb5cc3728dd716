// A Postgres schema written by the version before many merchants (issue 28): migrate() adds the
// tenant to its tables and keys, and the single-merchant inbox it holds goes on unchanged.
import { describe, expect, it } from 'vitest';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { expectKeptAsTheSingleMerchants, OLD_ROWS, oldPostgresSchema, T0 } from '../support/before-tenants.ts';
import { testPool, usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();

describe('postgresStore on a schema of the version before tenants', () => {
  it("keeps its entries, orders, covers and misses as the single merchant's, and then keeps tenants apart", async () => {
    const schema = `before_tenants_${process.pid}`;
    const pool = testPool(postgres.current.url);
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
      await expectKeptAsTheSingleMerchants(store);
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
