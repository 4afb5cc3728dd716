// A state database written by the first version of the sync (before in-flight marks, lease
// holders' host and pid, and scoped run lists) keeps working: it gains the new columns on open and
// keeps what it held, on SQLite and on Postgres.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { SyncState } from 'integration-sdk/sync';
import { postgresSyncState } from 'integration-sdk/sync/postgres';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { sqliteDatabaseClass } from '../../src/storage/sqlite.ts';
import { testPool, usePostgres } from '../inbox/support/postgres.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const T0 = 1_800_000_000_000;

async function stillWorks(state: SyncState): Promise<void> {
  try {
    expect((await state.lookup('old-scope', 'catalog', ['SKU-1'])).get('SKU-1')).toEqual({ fingerprint: 'old-fingerprint', sentAt: T0 + 50, seenSeq: 1, seenIndex: 0, inFlight: false });
    expect((await state.runs(10, undefined, 'old-scope')).map((run) => [run.runId, run.outcome, run.created])).toEqual([['old-run', 'completed', 1]]);
    expect(await state.countAcknowledged('old-scope', 'catalog')).toBe(1);
    // The first version's lease names no host or pid.
    expect(await state.acquireLease({ scope: 'old-scope', kind: 'stock', runId: 'new-run', startedAt: T0, now: T0 + 1, leaseMs: 60_000, host: 'h', pid: 1 })).toEqual({
      runId: 'old-stock-run',
      startedAt: T0,
      host: null,
      pid: null,
    });
    const seq = await state.startRun({ runId: 'new-run', scope: 'old-scope', kind: 'catalog', baseUrl: 'http://x/integration/v1', merchantId: 'm_1', full: false, startedAt: T0 + 2 });
    await state.markInFlight({ scope: 'old-scope', kind: 'catalog', seq, items: [{ key: 'SKU-1', externalId: 'SKU-1', storeId: '', index: 0, pairs: [] }] });
    expect((await state.lookup('old-scope', 'catalog', ['SKU-1'])).get('SKU-1')).toMatchObject({ fingerprint: 'old-fingerprint', inFlight: true });
    // A stock write of (SKU-1, st-1), a store the product was last sent with, invalidates its catalog
    // fingerprint: what the first version acknowledged for the pair is not known.
    await state.markInFlight({ scope: 'old-scope', kind: 'stock', seq, items: [{ key: 'k', externalId: 'SKU-1', storeId: 'st-1', index: 0, pairs: [{ key: 'k', externalId: 'SKU-1', storeId: 'st-1', fields: { stock_quantity: 1 } }] }] });
    expect((await state.lookup('old-scope', 'catalog', ['SKU-1'])).get('SKU-1')!.fingerprint).not.toBe('old-fingerprint');
  } finally {
    await state.close();
  }
}

describe('a first-version state database', () => {
  const dir = tempDir('sync-migration');
  afterAll(() => dir.remove());

  it('keeps working on SQLite', async () => {
    const path = `${dir.path}/old.db`;
    const Database = sqliteDatabaseClass('test', 'postgres');
    const old = new Database(path);
    old.exec(fixture('state-v1.sqlite.sql'));
    old.close();
    await stillWorks(sqliteSyncState({ path }));
    // Opened a second time, the added columns are found, not added again.
    const again = sqliteSyncState({ path });
    expect((await again.lookup('old-scope', 'catalog', ['SKU-1'])).get('SKU-1')?.inFlight).toBe(true);
    await again.close();
  });

  const postgres = usePostgres();
  it('keeps working on Postgres', async () => {
    const schema = `sync_old_${process.pid}`;
    const { default: pg } = await import('pg');
    const pool = testPool(postgres.current.url);
    try {
      await pool.query(fixture('state-v1.postgres.sql').replaceAll(':schema', schema));
    } finally {
      await pool.end();
    }
    await stillWorks(postgresSyncState({ connectionString: postgres.current.url, schema }));
  });
});
