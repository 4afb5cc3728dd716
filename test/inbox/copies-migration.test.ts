// A database the previous version wrote holds deliveries verified by two secrets but no record of
// when each secret first verified one (what a single merchant's copies are now paired from): the
// migration takes it from the entries it holds, so a copy arriving after the upgrade still pairs.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { InboxStore, NewInboxEntry } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { usePostgres } from './support/postgres.ts';
import { tempDir } from './support/temp-dir.ts';

const postgres = usePostgres();
const dir = tempDir('inbox-copies-migration');
afterAll(() => dir.remove());

const T0 = 1_800_000_000_000;
const MINUTE = 60_000;

function change(deliveryId: string, verifiedBy: string, receivedAt: number, [previous, status]: [string, string]): NewInboxEntry {
  const payload = JSON.stringify({ event: 'order.status_changed', data: { order_id: 'o-1', previous_status: previous, status } });
  return { deliveryId, event: 'order.status_changed', orderId: 'o-1', ts: 1, payload, known: true, receivedAt, verifiedBy };
}

let schemas = 0;
const stores: Array<[string, () => { open: () => InboxStore; forgetFirstVerified: () => Promise<void> }]> = [
  [
    'sqliteStore',
    () => {
      const path = `${dir.path}/inbox-${++schemas}.db`;
      return {
        open: () => sqliteStore({ path }),
        forgetFirstVerified: async () => {
          const database = new DatabaseSync(path);
          database.exec('DROP TABLE inbox_verifiers');
          database.close();
        },
      };
    },
  ],
  [
    'postgresStore',
    () => {
      const schema = `copies_migration_${process.pid}_${++schemas}`;
      return {
        open: () => postgresStore({ connectionString: postgres.current.url, schema }),
        forgetFirstVerified: async () => {
          const client = new pg.Client({ connectionString: postgres.current.url });
          await client.connect();
          await client.query(`DROP TABLE "${schema}".inbox_verifiers`);
          await client.end();
        },
      };
    },
  ],
];

describe.each(stores)('%s on a database of the previous version', (_name, database) => {
  it('takes when each secret first verified a delivery from the entries it holds', async () => {
    const file = database();
    const before = file.open();
    await before.migrate();
    // The old secret from T0; the new one verified its first delivery ten minutes later.
    await before.insert(change('a-1', 'sha256:old', T0, ['confirmed', 'preparing']));
    await before.insert(change('b-1', 'sha256:new', T0 + 10 * MINUTE, ['preparing', 'dispatched']));
    await before.insert(change('a-2', 'sha256:old', T0 + 10 * MINUTE - 1000, ['dispatched', 'delivered']));
    await before.close();
    await file.forgetFirstVerified();

    const after = file.open();
    await after.migrate();
    // The new secret's copy of a-2, twenty minutes on (its delivery was retried): still a copy.
    const copy = change('b-2', 'sha256:new', T0 + 30 * MINUTE, ['dispatched', 'delivered']);
    await after.insert(copy);
    expect(await after.get('b-2')).toMatchObject({ status: 'done', copyOf: 'a-2' });
    // The old secret's delivery from before the new one verified anything stays nobody's copy.
    await after.insert(change('b-3', 'sha256:new', T0 + 31 * MINUTE, ['confirmed', 'preparing']));
    expect(await after.get('b-3')).toMatchObject({ status: 'pending', copyOf: null });
    await after.close();
  });
});
