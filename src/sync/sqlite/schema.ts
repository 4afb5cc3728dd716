// The sync state's tables on SQLite, prefixed `sync_` so that the inbox's file can hold them too,
// and what a file written by an earlier version gains when it is opened.
import { addSqliteColumn, type SqliteDatabase } from '../../storage/sqlite.ts';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS sync_items (
  scope TEXT NOT NULL,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  external_id TEXT NOT NULL,
  store_id TEXT NOT NULL,
  fingerprint TEXT,
  sent_at INTEGER,
  store_ids TEXT,
  seen_seq INTEGER,
  seen_index INTEGER,
  PRIMARY KEY (scope, kind, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL UNIQUE,
  scope TEXT NOT NULL,
  kind TEXT NOT NULL,
  base_url TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  is_full INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  outcome TEXT NOT NULL,
  complete INTEGER NOT NULL DEFAULT 0,
  total INTEGER NOT NULL DEFAULT 0,
  unchanged INTEGER NOT NULL DEFAULT 0,
  sent INTEGER NOT NULL DEFAULT 0,
  created INTEGER,
  updated INTEGER NOT NULL DEFAULT 0,
  errors INTEGER NOT NULL DEFAULT 0,
  orphans INTEGER,
  error TEXT
);
CREATE INDEX IF NOT EXISTS sync_runs_complete ON sync_runs (scope, kind, complete, seq);
CREATE INDEX IF NOT EXISTS sync_runs_scope ON sync_runs (scope, seq);
CREATE TABLE IF NOT EXISTS sync_run_errors (
  run_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  external_id TEXT NOT NULL,
  store_id TEXT,
  code TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_leases (
  scope TEXT NOT NULL,
  kind TEXT NOT NULL,
  run_id TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, kind)
);
`;

/** Columns added after the first version: a file written by it gains them on open. */
const LATER_COLUMNS = [
  ['sync_items', 'in_flight', 'INTEGER NOT NULL DEFAULT 0'],
  ['sync_leases', 'host', 'TEXT'],
  ['sync_leases', 'pid', 'INTEGER'],
  // The fields of the stock pairs an acknowledged item wrote, by store (see pair-fields.ts).
  ['sync_items', 'pair_fields', 'TEXT'],
] as const;

/**
 * Whether a column added after the first version is missing. Read without a write lock, so that a
 * state whose tables are current is opened and read while another process writes (`sync runs`).
 */
export function laterColumnsMissing(db: SqliteDatabase): boolean {
  const columnsOf = new Map<string, Set<string>>();
  return LATER_COLUMNS.some(([table, column]) => {
    let columns = columnsOf.get(table);
    if (columns === undefined) {
      columns = new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((row) => row.name));
      columnsOf.set(table, columns);
    }
    return !columns.has(column);
  });
}

/** Adds the missing later columns (in a write transaction: another process may be adding them too). */
export function addLaterColumns(db: SqliteDatabase): void {
  for (const [table, column, definition] of LATER_COLUMNS) addSqliteColumn(db, table, column, definition);
}
