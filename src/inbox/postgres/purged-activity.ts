// The Postgres side of src/inbox/purged-activity.ts: a purge of whole entries counts what it deletes,
// per hour, in the same statement as the DELETE; activity() adds those counts; purgePreview() tells
// what a purge would delete.
import type { PoolClient } from 'pg';
import { PURGED_BUCKET_MS, type PurgedActivityRow } from '../purged-activity.ts';
import { decodedRow, entryFromRow, PAGE_COLUMNS, type InboxActivityRequest, type InboxRow, type PurgePreview, type PurgePreviewRequest, type PurgeRequest } from '../store.ts';
import { tenantParam, tenantWhere } from './tenant-filter.ts';

type Query = <R>(sql: string, params?: unknown[]) => Promise<R[]>;

/** The purged counts of one schema's inbox. */
export function purgedActivityOf(schema: string) {
  const table = `"${schema}".inbox_entries`;
  const purged = `"${schema}".inbox_purged_activity`;
  const hourOf = (column: string) => `(${column} - ${column} % ${PURGED_BUCKET_MS})`;
  return {
    async migrate(client: PoolClient): Promise<void> {
      await client.query(`CREATE TABLE IF NOT EXISTS ${purged} (
        hour_start BIGINT PRIMARY KEY, received BIGINT NOT NULL DEFAULT 0, done BIGINT NOT NULL DEFAULT 0, dead BIGINT NOT NULL DEFAULT 0)`);
    },

    /** Deletes the entries of `request` (what: 'entry') and adds them to the purged counts, in one statement; how many. */
    async purgeEntries(query: Query, request: Pick<PurgeRequest, 'status' | 'finishedBefore' | 'tenant'>): Promise<number> {
      const finished = request.status === 'dead' ? 'dead' : 'done';
      const [row] = await query<{ n: string }>(
        `WITH gone AS (DELETE FROM ${table} WHERE status = $1 AND finished_at < $2 AND ${tenantWhere(request.tenant, 3)} RETURNING received_at, finished_at),
         hours AS (
           SELECT h, SUM(r) AS r, SUM(f) AS f FROM (
             SELECT ${hourOf('received_at')} AS h, 1 AS r, 0 AS f FROM gone
             UNION ALL SELECT ${hourOf('finished_at')}, 0, 1 FROM gone) AS each_hour
           GROUP BY h),
         counted AS (
           INSERT INTO ${purged} AS p (hour_start, received, ${finished}) SELECT h, r, f FROM hours
           ON CONFLICT (hour_start) DO UPDATE SET received = p.received + EXCLUDED.received, ${finished} = p.${finished} + EXCLUDED.${finished})
         SELECT COUNT(*) AS n FROM gone`,
        [request.status, request.finishedBefore, ...tenantParam(request.tenant)],
      );
      return Number(row?.n ?? 0);
    },

    /** The purged counts of the hours from `since` to `until`. */
    rows: (query: Query, request: InboxActivityRequest) =>
      query<PurgedActivityRow>(`SELECT hour_start, received, done, dead FROM ${purged} WHERE hour_start >= $1 AND hour_start < $2`, [request.since, request.until]),

    /** How many entries a purge of `request` would delete, and the first `limit` of them. */
    async preview(query: Query, request: PurgePreviewRequest): Promise<PurgePreview> {
      const [counted, rows] = await Promise.all([
        query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE status = $1 AND finished_at < $2 AND ${tenantWhere(request.tenant, 3)}`, [
          request.status,
          request.finishedBefore,
          ...tenantParam(request.tenant),
        ]),
        query<InboxRow>(`SELECT ${PAGE_COLUMNS} FROM ${table} WHERE status = $1 AND finished_at < $2 AND ${tenantWhere(request.tenant, 4)} ORDER BY finished_at, delivery_id LIMIT $3`, [
          request.status,
          request.finishedBefore,
          request.limit,
          ...tenantParam(request.tenant),
        ]),
      ]);
      return { count: Number(counted[0]?.n ?? 0), entries: rows.map((row) => entryFromRow(decodedRow(row))) };
    },
  };
}
