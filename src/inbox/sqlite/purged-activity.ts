// The SQLite side of src/inbox/purged-activity.ts: a purge of whole entries counts what it deletes,
// per hour, in the same transaction as the DELETE; activity() adds those counts; purgePreview()
// tells what a purge would delete.
import { sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';
import { PURGED_BUCKET_MS, type PurgedActivityRow } from '../purged-activity.ts';
import { decodedRow, entryFromRow, PAGE_COLUMNS, type InboxActivityRequest, type InboxRow, type PurgePreview, type PurgePreviewRequest, type PurgeRequest } from '../store.ts';
import { tenantWhere } from './tenant-filter.ts';

export const PURGED_ACTIVITY_SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox_purged_activity (
  hour_start INTEGER PRIMARY KEY,
  received INTEGER NOT NULL DEFAULT 0,
  done INTEGER NOT NULL DEFAULT 0,
  dead INTEGER NOT NULL DEFAULT 0
);
`;

const hourOf = (column: string) => `(${column} - ${column} % ${PURGED_BUCKET_MS})`;

/** Deletes the entries of `request` (what: 'entry') and adds them to the purged counts; how many. */
export function purgeEntriesCounted(database: Database, request: Pick<PurgeRequest, 'status' | 'finishedBefore' | 'tenant'>): number {
  const finishedColumn = request.status === 'dead' ? 'dead' : 'done';
  const filter = tenantWhere(request.tenant);
  return sqliteTransaction(database, () => {
    const add = (column: 'received' | 'done' | 'dead', by: string) =>
      database
        .prepare(
          `INSERT INTO inbox_purged_activity (hour_start, ${column})
           SELECT ${hourOf(by)} AS h, COUNT(*) FROM inbox_entries WHERE status = ? AND finished_at < ? AND ${filter.sql} GROUP BY h
           ON CONFLICT (hour_start) DO UPDATE SET ${column} = ${column} + excluded.${column}`,
        )
        .run(filter.named, request.status, request.finishedBefore);
    add('received', 'received_at');
    add(finishedColumn, 'finished_at');
    return Number(database.prepare(`DELETE FROM inbox_entries WHERE status = ? AND finished_at < ? AND ${filter.sql}`).run(filter.named, request.status, request.finishedBefore).changes);
  });
}

/** The purged counts of the hours from `since` to `until`. */
export function purgedActivityRows(database: Database, request: InboxActivityRequest): PurgedActivityRow[] {
  return database
    .prepare('SELECT hour_start, received, done, dead FROM inbox_purged_activity WHERE hour_start >= ? AND hour_start < ?')
    .all(request.since, request.until) as unknown as PurgedActivityRow[];
}

/** How many entries a purge of `request` would delete, and the first `limit` of them. */
export function purgePreviewOf(database: Database, request: PurgePreviewRequest): PurgePreview {
  const filter = tenantWhere(request.tenant);
  const { n } = database.prepare(`SELECT COUNT(*) AS n FROM inbox_entries WHERE status = ? AND finished_at < ? AND ${filter.sql}`).get(filter.named, request.status, request.finishedBefore) as { n: number };
  const rows = database
    .prepare(`SELECT ${PAGE_COLUMNS} FROM inbox_entries WHERE status = ? AND finished_at < ? AND ${filter.sql} ORDER BY finished_at, delivery_id LIMIT ?`)
    .all(filter.named, request.status, request.finishedBefore, request.limit) as unknown as InboxRow[];
  return { count: Number(n), entries: rows.map((row) => entryFromRow(decodedRow(row))) };
}
