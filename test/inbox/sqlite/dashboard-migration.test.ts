// A database written by an earlier version (no order-reference columns): opening it adds them and
// fills them from the payloads still there, so its orders can be found by display number.
import { DatabaseSync } from 'node:sqlite';
import { afterAll, expect, it } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { tempDir } from '../support/temp-dir.ts';

const dir = tempDir('inbox-sqlite-migration');
afterAll(() => dir.remove());

it('adds and fills display_number and external_order_id on an older database, once', async () => {
  const path = `${dir.path}/old.db`;
  const old = new DatabaseSync(path);
  old.exec(`CREATE TABLE inbox_entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, order_id TEXT,
    ts INTEGER NOT NULL, payload TEXT, known INTEGER NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
    received_at INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, lease_owner TEXT, lease_until INTEGER, finished_at INTEGER)`);
  const insert = old.prepare(`INSERT INTO inbox_entries (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at) VALUES (?, 'order.created', ?, 1, ?, 1, 'done', ?, ?)`);
  insert.run('d-1', 'o-1', JSON.stringify({ event: 'order.created', data: { order_id: 'o-1', display_number: '501', external_order_id: 'MKT-9' } }), 1000, 1000);
  insert.run('d-2', 'o-2', null, 2000, 2000); // its payload already cleared by retention
  insert.run('d-3', 'o-3', 'not json', 3000, 3000);
  old.close();

  const store = sqliteStore({ path });
  await store.migrate();
  expect(await store.page!({ limit: 10, search: '#501' })).toMatchObject([{ id: 'd-1', displayNumber: '501', externalOrderId: 'MKT-9' }]);
  expect(await store.page!({ limit: 10, search: 'MKT-9' })).toHaveLength(1);
  expect((await store.page!({ limit: 10 })).map((entry) => entry.id)).toEqual(['d-3', 'd-2', 'd-1']);
  await store.close();
  // Opened again: nothing to add, nothing rewritten.
  const again = sqliteStore({ path });
  await again.migrate();
  expect(await again.page!({ limit: 10, search: '501' })).toHaveLength(1);
  await again.close();
});
