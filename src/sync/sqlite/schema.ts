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
export function addLaterColumns(db: SqliteDatabase): void {
  addSqliteColumn(db, 'sync_items', 'in_flight', 'INTEGER NOT NULL DEFAULT 0');
  addSqliteColumn(db, 'sync_leases', 'host', 'TEXT');
  addSqliteColumn(db, 'sync_leases', 'pid', 'INTEGER');
  // The fields of the stock pairs an acknowledged item wrote, by store (see pair-fields.ts).
  addSqliteColumn(db, 'sync_items', 'pair_fields', 'TEXT');
}
