/**
 * The SQLite side of `missed`: the last reconcile's record and each missed delivery from the
 * reconcile that first found it until it arrives, is acknowledged (who, when) or is recovered.
 */
import { addSqliteColumn, sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';
import { missedFromRow, type InboxStore, type MissedDelivery, type MissedRow, type ReconcileRecord } from '../store.ts';

const MISSED_SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox_missed (
  delivery_id TEXT PRIMARY KEY,
  event TEXT NOT NULL,
  status TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  last_error TEXT,
  created_at TEXT NOT NULL,
  attempt_count INTEGER NOT NULL,
  gives_up_at TEXT,
  first_seen_at INTEGER NOT NULL,
  ended TEXT,
  ended_at INTEGER,
  ended_by TEXT
);
CREATE INDEX IF NOT EXISTS inbox_missed_open ON inbox_missed (created_at, delivery_id) WHERE ended IS NULL;
CREATE INDEX IF NOT EXISTS inbox_missed_ended ON inbox_missed (ended_at) WHERE ended IS NOT NULL;
`;

const COLUMNS = 'delivery_id, event, status, endpoint_id, last_error, created_at, attempt_count, gives_up_at, first_seen_at, ended, ended_at, ended_by';

/**
 * Creates the missed table; a database an earlier version wrote keeps the misses its last reconcile
 * listed, open from when that reconcile ran.
 */
export function migrateMissed(database: Database): void {
  if (database.prepare(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'inbox_missed'`).get()) return;
  sqliteTransaction(database, () => {
    addSqliteColumn(database, 'inbox_reconcile_runs', 'endpoint_ids', 'TEXT');
    database.exec(MISSED_SCHEMA);
    const last = database.prepare('SELECT ran_at, missed FROM inbox_reconcile_runs WHERE id = 1').get() as { ran_at: number; missed: string } | undefined;
    if (last) insertMissed(database, JSON.parse(last.missed) as ReconcileRecord['missed'], Number(last.ran_at));
  });
}

function insertMissed(database: Database, missed: readonly MissedDelivery[], now: number): string[] {
  const known = database.prepare('SELECT 1 AS found FROM inbox_missed WHERE delivery_id = ?');
  const insert = database.prepare(`INSERT INTO inbox_missed (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`);
  const update = database.prepare('UPDATE inbox_missed SET status = ?, last_error = ?, attempt_count = ?, gives_up_at = ? WHERE delivery_id = ?');
  const added: string[] = [];
  for (const each of missed) {
    if (known.get(each.deliveryId)) {
      update.run(each.status, each.lastError, each.attemptCount, each.givesUpAt, each.deliveryId);
    } else {
      insert.run(each.deliveryId, each.event, each.status, each.endpointId, each.lastError, each.createdAt, each.attemptCount, each.givesUpAt, now);
      added.push(each.deliveryId);
    }
  }
  return added;
}

type Run = <T>(operation: (database: Database) => T) => Promise<T>;

/** The store's reconcile record and missed methods, run by `durable` (migrated, WAL synced at commit). */
export function sqliteMissedMethods(durable: Run): Required<Pick<InboxStore, 'saveReconcile' | 'lastReconcile' | 'recordMissed' | 'listMissed' | 'endMissed'>> {
  return {
    saveReconcile: (record) =>
      durable((database) => {
        database
          .prepare(
            `INSERT INTO inbox_reconcile_runs (id, ran_at, missed, endpoint_ids) VALUES (1, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, missed = excluded.missed, endpoint_ids = excluded.endpoint_ids`,
          )
          .run(record.ranAt, JSON.stringify(record.missed), record.endpointIds === undefined ? null : JSON.stringify(record.endpointIds));
      }),

    lastReconcile: () =>
      durable((database) => {
        const row = database.prepare(`SELECT ran_at, missed, endpoint_ids FROM inbox_reconcile_runs WHERE id = 1`).get() as
          | { ran_at: number; missed: string; endpoint_ids: string | null }
          | undefined;
        if (!row) return undefined;
        const record: ReconcileRecord = { ranAt: Number(row.ran_at), missed: JSON.parse(row.missed) as ReconcileRecord['missed'] };
        return row.endpoint_ids === null ? record : { ...record, endpointIds: JSON.parse(row.endpoint_ids) as string[] };
      }),

    recordMissed: (missed, now) => durable((database) => sqliteTransaction(database, () => insertMissed(database, missed, now))),

    listMissed: ({ open, limit }) =>
      durable((database) => {
        const sql = open
          ? `SELECT ${COLUMNS} FROM inbox_missed WHERE ended IS NULL ORDER BY created_at, delivery_id LIMIT ?`
          : `SELECT ${COLUMNS} FROM inbox_missed WHERE ended IS NOT NULL ORDER BY ended_at DESC, delivery_id LIMIT ?`;
        return (database.prepare(sql).all(limit) as MissedRow[]).map(missedFromRow);
      }),

    endMissed: ({ deliveryIds, how, at, by }) =>
      durable((database) =>
        sqliteTransaction(database, () => {
          const end = (where: string, params: unknown[]) =>
            (database.prepare(`UPDATE inbox_missed SET ended = ?, ended_at = ?, ended_by = ? WHERE ended IS NULL AND ${where} RETURNING delivery_id`).all(how, at, by, ...params) as {
              delivery_id: string;
            }[]).map((row) => row.delivery_id);
          if (deliveryIds === 'all') return end('1 = 1', []);
          return deliveryIds.flatMap((id) => end('delivery_id = ?', [id]));
        }),
      ),
  };
}
