// A SQLite file written by the version before many merchants (issue 28): migrate() rebuilds its
// tables keyed by tenant, and the single-merchant inbox it holds goes on unchanged.
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { expectKeptAsTheSingleMerchants, OLD_ROWS, OLD_SQLITE_SCHEMA, T0 } from '../support/before-tenants.ts';
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
    await expectKeptAsTheSingleMerchants(store);
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
