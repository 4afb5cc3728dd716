/**
 * `integration-sdk/sync/sqlite`: the sync's state on a SQLite file (`node:sqlite`, no dependency).
 * Its tables are prefixed `sync_`, so the inbox's file can hold them too. WAL with
 * `synchronous=NORMAL`: a committed acknowledgement survives a killed process; a power cut may lose
 * the last ones, and those items are simply sent again (absolute values).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { openSqliteFile, sqliteTransaction, type SqliteDatabase } from '../../storage/sqlite.ts';
import type { SyncState, StoredSyncRun, SyncKind } from '../state.ts';
import { stateFailure } from '../state-errors.ts';
import { acknowledge, markInFlight, markSeen } from './item-writes.ts';
import { addLaterColumns, laterColumnsMissing, SCHEMA } from './schema.ts';
import { FINISHED_COLUMNS, finishedValues, runErrorFromRow, runFromRow, storedItemsByKey, type RunRow } from '../state-rows.ts';

/** Options of {@link sqliteSyncState}. */
export interface SqliteSyncStateOptions {
  /** The database file; created with its tables when missing. May be the inbox's file. */
  path: string;
  /**
   * How long one operation keeps retrying while another connection holds the write lock, in ms.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** Pages of WAL between two automatic checkpoints (4 KB each). */
const CHECKPOINT_PAGES = 2000;
/** Items one statement goes through at most when it reads or forgets a whole scope and kind. */
const RANGE_ROWS = 20_000;

/** Where a range of keys ends: how many items it holds (fewer than {@link RANGE_ROWS}: the last range) and its last key. */
interface RangeEnd {
  rows: number;
  last: string | null;
}

/** The end of the range of at most {@link RANGE_ROWS} items after `after`. */
function rangeEnd(db: SqliteDatabase, scope: string, kind: SyncKind, after: string): RangeEnd {
  const end = db
    .prepare('SELECT count(*) AS rows, max(key) AS last FROM (SELECT key FROM sync_items WHERE scope = ? AND kind = ? AND key > ? ORDER BY key LIMIT ?)')
    .get(scope, kind, after, RANGE_ROWS) as { rows: number; last: string | null };
  return { rows: Number(end.rows), last: end.last };
}

const RUN_COLUMNS = 'seq, run_id, scope, kind, base_url, merchant_id, is_full, started_at, finished_at, outcome, complete, total, unchanged, sent, created, updated, errors, orphans, error';

/**
 * The sync state on a SQLite file.
 *
 * @example
 * ```ts
 * import { createSync } from 'integration-sdk/sync';
 * import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
 *
 * const sync = createSync({ client, state: sqliteSyncState({ path: './integration-state.db' }), maxAgeDays: 7 });
 * ```
 */
export function sqliteSyncState(options: SqliteSyncStateOptions): SyncState {
  const file = openSqliteFile({ path: options?.path, busyTimeoutMs: options?.busyTimeoutMs, owner: 'sqliteSyncState', alternative: 'postgresSyncState' });

  let migrated = false;
  async function migrate(): Promise<void> {
    if (migrated) return;
    await file.attempt((database) => {
      database.exec('PRAGMA journal_mode = WAL');
      database.exec('PRAGMA synchronous = NORMAL');
      // A checkpoint every 8 MB of WAL rather than every 4 MB: a run writes one transaction per
      // batch, and at the default the checkpoints' syncs took most of the state's write time. Not
      // more: a checkpoint runs inside the write that crosses the mark, holding the event loop
      // (32 MB took some 35 ms of CPU, beyond a run's 10 ms between turns).
      database.exec(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
      // Each statement of the schema is IF NOT EXISTS: on a current file none of them takes the write
      // lock, nor does this check, so a read (`sync runs`) goes on while another process writes.
      database.exec(SCHEMA);
      if (laterColumnsMissing(database)) sqliteTransaction(database, () => addLaterColumns(database));
    });
    migrated = true;
  }
  async function run<T>(operation: (db: SqliteDatabase) => T): Promise<T> {
    try {
      await migrate();
      return await file.attempt(operation);
    } catch (error) {
      throw stateFailure(error, { state: `SQLite file ${file.path}`, busyTimeoutMs: file.busyTimeoutMs });
    }
  }
  const write = <T>(operation: (db: SqliteDatabase) => T) => run((database) => sqliteTransaction(database, () => operation(database)));
  const runRow = (row: unknown) => runFromRow(row as RunRow);

  /**
   * Goes through a scope and kind's items in ranges of at most {@link RANGE_ROWS} keys, one `through`
   * (a read, or a write transaction) each, with a turn of the event loop between two: SQLite is
   * synchronous, and one statement over a million rows would hold the loop for a tenth of a second.
   * `step` works on the range after `after` and tells where it ended; `stop` ends the walk early.
   */
  async function eachKeyRange(
    from: string,
    through: <T>(operation: (db: SqliteDatabase) => T) => Promise<T>,
    step: (db: SqliteDatabase, after: string) => RangeEnd & { stop?: boolean },
  ): Promise<void> {
    for (let after = from; ; ) {
      const end = await through((db) => step(db, after));
      if (end.stop || end.rows < RANGE_ROWS || end.last === null) return;
      after = end.last;
      await nextTurn();
    }
  }

  /** How many of a scope and kind's items meet `filter`, counted one range of keys at a time. */
  async function countInRanges(scope: string, kind: SyncKind, filter: string, ...values: number[]): Promise<number> {
    let count = 0;
    await eachKeyRange('', run, (db, after) => {
      const range = db
        .prepare(
          `SELECT count(*) AS rows, max(key) AS last, count(*) FILTER (WHERE ${filter}) AS n
           FROM (SELECT key, fingerprint, seen_seq FROM sync_items WHERE scope = ? AND kind = ? AND key > ? ORDER BY key LIMIT ?)`,
        )
        .get(...values, scope, kind, after, RANGE_ROWS) as { rows: number; last: string | null; n: number };
      count += Number(range.n);
      return { rows: Number(range.rows), last: range.last };
    });
    return count;
  }

  return {
    migrate: () => run(() => undefined),

    acquireLease: ({ scope, kind, runId, startedAt, now, leaseMs, host, pid, replacing }) =>
      write((db) => {
        const held = db.prepare('SELECT run_id, started_at, expires_at, host, pid FROM sync_leases WHERE scope = ? AND kind = ?').get(scope, kind) as
          | { run_id: string; started_at: number; expires_at: number; host: string | null; pid: number | null }
          | undefined;
        const free = !held || held.run_id === runId || held.expires_at <= now || held.run_id === replacing;
        if (!free) return { runId: held.run_id, startedAt: Number(held.started_at), host: held.host, pid: held.pid === null ? null : Number(held.pid) };
        if (held && held.run_id !== runId) {
          db.prepare("UPDATE sync_runs SET outcome = 'interrupted' WHERE run_id = ? AND outcome = 'running'").run(held.run_id);
        }
        db.prepare('INSERT OR REPLACE INTO sync_leases (scope, kind, run_id, started_at, expires_at, host, pid) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
          scope,
          kind,
          runId,
          startedAt,
          now + leaseMs,
          host ?? null,
          pid ?? null,
        );
        return null;
      }),

    renewLease: ({ scope, kind, runId, now, leaseMs }) =>
      run((db) => Number(db.prepare('UPDATE sync_leases SET expires_at = ? WHERE scope = ? AND kind = ? AND run_id = ?').run(now + leaseMs, scope, kind, runId).changes) === 1),

    releaseLease: ({ scope, kind, runId }) =>
      run((db) => {
        db.prepare('DELETE FROM sync_leases WHERE scope = ? AND kind = ? AND run_id = ?').run(scope, kind, runId);
      }),

    startRun: (started) =>
      run((db) => {
        const row = db
          .prepare(
            "INSERT INTO sync_runs (run_id, scope, kind, base_url, merchant_id, is_full, started_at, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, 'running') RETURNING seq",
          )
          .get(started.runId, started.scope, started.kind, started.baseUrl, started.merchantId, started.full ? 1 : 0, started.startedAt) as { seq: number };
        return Number(row.seq);
      }),

    finishRun: (runId, finished) =>
      run((db) => {
        db.prepare(`UPDATE sync_runs SET ${FINISHED_COLUMNS.map((column) => `${column} = ?`).join(', ')} WHERE run_id = ?`).run(...finishedValues(finished, (complete) => (complete ? 1 : 0)), runId);
      }),

    lookup: (scope, kind, keys) =>
      run((db) => {
        const rows = db
          .prepare(
            'SELECT key, fingerprint, sent_at, seen_seq, seen_index, in_flight FROM sync_items WHERE scope = ? AND kind = ? AND key IN (SELECT value FROM json_each(?))',
          )
          .all(scope, kind, JSON.stringify(keys)) as { key: string; fingerprint: string | null; sent_at: number | null; seen_seq: number | null; seen_index: number | null; in_flight: number }[];
        return storedItemsByKey(rows);
      }),

    markSeen: async (scope, kind, seq, marks) => {
      if (marks.length === 0) return;
      await write((db) => markSeen(db, scope, kind, seq, marks));
    },

    markInFlight: async ({ scope, kind, seq, items }) => {
      if (items.length === 0) return;
      await write((db) => markInFlight(db, scope, kind, seq, items));
    },

    recordBatch: async ({ scope, kind, runId, sentAt, seen, acknowledged, errors }) => {
      if (seen.marks.length === 0 && acknowledged.length === 0 && errors.length === 0) return;
      await write((db) => {
        if (seen.marks.length > 0) markSeen(db, scope, kind, seen.seq, seen.marks);
        if (acknowledged.length > 0) acknowledge(db, scope, kind, sentAt, seen.seq, acknowledged);
        if (errors.length > 0) {
          db.prepare(
            `INSERT OR REPLACE INTO sync_run_errors (run_id, idx, external_id, store_id, code, message)
             SELECT ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)`,
          ).run(runId, JSON.stringify(errors.map((error) => [error.index, error.external_id, error.store_id ?? null, error.code, error.message])));
        }
      });
    },

    // A page is read one range of keys at a time; the range's end is looked up only when the page
    // needs the next range, so a page among many orphans stops within the first rows it reads.
    async orphans(scope, kind, seq, afterKey, limit) {
      const found: { key: string; external_id: string; store_id: string; store_ids: string | null; sent_at: number }[] = [];
      await eachKeyRange(afterKey ?? '', run, (db, after) => {
        const rows = db
          .prepare(
            `SELECT key, external_id, store_id, store_ids, sent_at
             FROM (SELECT key, external_id, store_id, store_ids, sent_at, fingerprint, seen_seq FROM sync_items WHERE scope = ? AND kind = ? AND key > ? ORDER BY key LIMIT ?)
             WHERE fingerprint IS NOT NULL AND (seen_seq IS NULL OR seen_seq < ?) LIMIT ?`,
          )
          .all(scope, kind, after, RANGE_ROWS, seq, limit - found.length) as typeof found;
        found.push(...rows);
        return found.length >= limit ? { rows: 0, last: null, stop: true } : rangeEnd(db, scope, kind, after);
      });
      return found.map((row) => ({
        key: row.key,
        externalId: row.external_id,
        storeId: row.store_id,
        storeIds: row.store_ids ? row.store_ids.split(' ') : [],
        sentAt: Number(row.sent_at),
      }));
    },

    countOrphans: (scope, kind, seq) => countInRanges(scope, kind, 'fingerprint IS NOT NULL AND (seen_seq IS NULL OR seen_seq < ?)', seq),

    countAcknowledged: (scope, kind) => countInRanges(scope, kind, 'fingerprint IS NOT NULL'),

    // By `external_id`: a scan of the scope and kind, with no index on it (forgetting is an operator's
    // occasional act; an index would be paid by every write of every run). One transaction per range
    // of keys: a forget stopped half-way has forgotten part, and running it again forgets the rest.
    async forget(scope, kind, externalIds) {
      let forgotten = 0;
      const ids = externalIds === undefined ? undefined : JSON.stringify(externalIds);
      await eachKeyRange('', write, (db, after) => {
        const end = rangeEnd(db, scope, kind, after);
        if (end.last === null) return end;
        const range = 'DELETE FROM sync_items WHERE scope = ? AND kind = ? AND key > ? AND key <= ?';
        const { changes } =
          ids === undefined
            ? db.prepare(range).run(scope, kind, after, end.last)
            : db.prepare(`${range} AND external_id IN (SELECT value FROM json_each(?))`).run(scope, kind, after, end.last, ids);
        forgotten += Number(changes);
        return end;
      });
      return forgotten;
    },

    forgetKeys: (scope, kind, keys) =>
      write((db) => Number(db.prepare('DELETE FROM sync_items WHERE scope = ? AND kind = ? AND key IN (SELECT value FROM json_each(?))').run(scope, kind, JSON.stringify(keys)).changes)),

    lastCompleteRun: (scope, kind) =>
      run((db) => {
        const row = db.prepare(`SELECT ${RUN_COLUMNS} FROM sync_runs WHERE scope = ? AND kind = ? AND complete = 1 ORDER BY seq DESC LIMIT 1`).get(scope, kind);
        return row ? runRow(row) : null;
      }),

    runs: (limit, beforeSeq, scope) =>
      run((db) =>
        (scope === undefined
          ? db.prepare(`SELECT ${RUN_COLUMNS} FROM sync_runs WHERE seq < ? ORDER BY seq DESC LIMIT ?`).all(beforeSeq ?? Number.MAX_SAFE_INTEGER, limit)
          : db.prepare(`SELECT ${RUN_COLUMNS} FROM sync_runs WHERE scope = ? AND seq < ? ORDER BY seq DESC LIMIT ?`).all(scope, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit)
        ).map(runRow),
      ),

    run: (runId) =>
      run((db) => {
        const row = db.prepare(`SELECT ${RUN_COLUMNS} FROM sync_runs WHERE run_id = ?`).get(runId);
        return row ? runRow(row) : null;
      }),

    runErrors: (runId, afterIndex, limit) =>
      run((db) =>
        (
          db
            .prepare('SELECT idx, external_id, store_id, code, message FROM sync_run_errors WHERE run_id = ? AND idx > ? ORDER BY idx LIMIT ?')
            .all(runId, afterIndex, limit) as { idx: number; external_id: string; store_id: string | null; code: string; message: string }[]
        ).map(runErrorFromRow),
      ),

    async close() {
      file.close();
    },
  } satisfies SyncState as SyncState;
}

export type { SyncState, StoredSyncRun, SyncKind };
