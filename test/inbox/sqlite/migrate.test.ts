import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { tempDir } from '../support/temp-dir.ts';

const dir = tempDir('inbox-sqlite-migrate');
afterAll(() => dir.remove());

// The table as 0.1 created it, before the schema_issues column.
const SCHEMA_0_1 = `
CREATE TABLE inbox_entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, order_id TEXT,
  ts INTEGER NOT NULL, payload TEXT, known INTEGER NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT, received_at INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, lease_owner TEXT, lease_until INTEGER, finished_at INTEGER
);
CREATE INDEX inbox_entries_order ON inbox_entries (order_id, ts, seq);`;

describe('sqliteStore on a database an earlier version wrote', () => {
  it('adds the schema_issues column, keeps the old entries, and stores marked ones', async () => {
    const path = `${dir.path}/old.db`;
    const old = new DatabaseSync(path);
    old.exec(SCHEMA_0_1);
    old.exec(`INSERT INTO inbox_entries (delivery_id, event, order_id, ts, payload, known, status, last_error, received_at, next_attempt_at)
              VALUES ('old-1', 'order.created', 'o-1', 1, '{}', 1, 'dead', 'Error: joao@example.com refused', 5, 5)`);
    old.close();
    const store = sqliteStore({ path });
    await store.migrate();
    expect(await store.get('old-1')).toMatchObject({ status: 'dead', schemaIssues: null, payload: '{}', lastError: 'Error: [email] refused' });
    expect(await store.insert({ deliveryId: 'old-1', event: 'order.created', orderId: 'o-1', ts: 1, payload: '{}', known: true, receivedAt: 6 })).toBe('duplicate');
    const marked = { deliveryId: 'new-1', event: 'order.created', orderId: 'o-2', ts: 1.5, payload: '{}', known: true, receivedAt: 7, schemaIssues: ['data.metadata'] };
    expect(await store.insert(marked)).toBe('stored');
    expect(await store.get('new-1')).toMatchObject({ schemaIssues: ['data.metadata'], ts: 1.5 });
    expect(await store.stats(10)).toMatchObject({ received: 2, invalidPayload: 1 });
    await store.close();
    // A second open finds the column there.
    const again = sqliteStore({ path });
    await again.migrate();
    expect((await again.stats(10)).received).toBe(2);
    await again.close();
  });
});
