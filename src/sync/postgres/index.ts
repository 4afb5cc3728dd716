/**
 * `integration-sdk/sync/postgres`: the sync's state on Postgres, in its own schema (default
 * `integration_sync`), so that the inbox's database can hold it too and several processes can share
 * it (one run per scope and kind at a time, by lease). Needs `pg` ≥ 8, an optional peer dependency.
 */
import { checkPostgresOptions, postgresPool, type PostgresConnectionOptions } from '../../storage/postgres.ts';
import type { SeenMark, SyncState } from '../state.ts';
import { FINISHED_COLUMNS, finishedValues, runErrorFromRow, runFromRow, storedItemsByKey, type RunRow } from '../state-rows.ts';

export type { PostgresConnectionOptions } from '../../storage/postgres.ts';

/** Options of {@link postgresSyncState}: a connection string (or pool config), or an existing pool. */
export interface PostgresSyncStateOptions extends PostgresConnectionOptions {
  /** The schema holding the sync's tables, created on first use. @default 'integration_sync' */
  schema?: string;
}

const RUN_COLUMNS = 'seq, run_id, scope, kind, base_url, merchant_id, is_full, started_at, finished_at, outcome, complete, total, unchanged, sent, created, updated, errors, orphans, error';

/**
 * The sync state on Postgres.
 *
 * @example
 * ```ts
 * import { createSync } from 'integration-sdk/sync';
 * import { postgresSyncState } from 'integration-sdk/sync/postgres';
 *
 * const sync = createSync({ client, state: postgresSyncState({ connectionString: process.env.DATABASE_URL }), maxAgeDays: 7 });
 * ```
 */
export function postgresSyncState(options: PostgresSyncStateOptions): SyncState {
  const schema = checkPostgresOptions('postgresSyncState', options, options?.schema ?? 'integration_sync');
  const db = postgresPool('postgresSyncState', options);
  const items = `"${schema}".items`;
  const runs = `"${schema}".runs`;
  const runErrors = `"${schema}".run_errors`;
  const leases = `"${schema}".leases`;

  const migrate = () =>
    db.migrateOnce(`integration-sdk-sync:${schema}`, async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${items} (
          scope TEXT NOT NULL,
          kind TEXT NOT NULL,
          key TEXT NOT NULL,
          external_id TEXT NOT NULL,
          store_id TEXT NOT NULL,
          fingerprint TEXT,
          sent_at BIGINT,
          store_ids TEXT[],
          seen_seq BIGINT,
          seen_index BIGINT,
          PRIMARY KEY (scope, kind, key)
        )`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${runs} (
          seq BIGSERIAL PRIMARY KEY,
          run_id TEXT NOT NULL UNIQUE,
          scope TEXT NOT NULL,
          kind TEXT NOT NULL,
          base_url TEXT NOT NULL,
          merchant_id TEXT NOT NULL,
          is_full BOOLEAN NOT NULL,
          started_at BIGINT NOT NULL,
          finished_at BIGINT,
          outcome TEXT NOT NULL,
          complete BOOLEAN NOT NULL DEFAULT false,
          total BIGINT NOT NULL DEFAULT 0,
          unchanged BIGINT NOT NULL DEFAULT 0,
          sent BIGINT NOT NULL DEFAULT 0,
          created BIGINT,
          updated BIGINT NOT NULL DEFAULT 0,
          errors BIGINT NOT NULL DEFAULT 0,
          orphans BIGINT,
          error TEXT
        )`);
      await client.query(`CREATE INDEX IF NOT EXISTS runs_complete ON ${runs} (scope, kind, complete, seq)`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${runErrors} (
          run_id TEXT NOT NULL,
          idx BIGINT NOT NULL,
          external_id TEXT NOT NULL,
          store_id TEXT,
          code TEXT NOT NULL,
          message TEXT NOT NULL,
          PRIMARY KEY (run_id, idx)
        )`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${leases} (
          scope TEXT NOT NULL,
          kind TEXT NOT NULL,
          run_id TEXT NOT NULL,
          started_at BIGINT NOT NULL,
          expires_at BIGINT NOT NULL,
          PRIMARY KEY (scope, kind)
        )`);
    });

  async function query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    await migrate();
    return db.query<R>(sql, params);
  }
  async function changes(sql: string, params: unknown[] = []): Promise<number> {
    await migrate();
    return db.changes(sql, params);
  }
  const runRow = (row: RunRow) => runFromRow(row);
  const markSeenStatement = (scope: string, kind: string, seq: number, marks: readonly SeenMark[]): [string, unknown[]] => [
    `INSERT INTO ${items} (scope, kind, key, external_id, store_id, seen_seq, seen_index)
     SELECT $1, $2, k, e, s, $3, i FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[]) AS t(k, e, s, i)
     ON CONFLICT (scope, kind, key) DO UPDATE SET seen_seq = EXCLUDED.seen_seq, seen_index = EXCLUDED.seen_index`,
    [scope, kind, seq, marks.map((m) => m.key), marks.map((m) => m.externalId), marks.map((m) => m.storeId), marks.map((m) => m.index)],
  ];

  return {
    migrate,

    async acquireLease({ scope, kind, runId, startedAt, now, leaseMs }) {
      // Taken only when free or expired: concurrent takers race on the row, and one wins.
      const previous = await query<{ run_id: string }>(`SELECT run_id FROM ${leases} WHERE scope = $1 AND kind = $2`, [scope, kind]);
      const taken = await query<{ run_id: string }>(
        `INSERT INTO ${leases} (scope, kind, run_id, started_at, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (scope, kind) DO UPDATE SET run_id = EXCLUDED.run_id, started_at = EXCLUDED.started_at, expires_at = EXCLUDED.expires_at
         WHERE ${leases}.expires_at <= $6 OR ${leases}.run_id = EXCLUDED.run_id
         RETURNING run_id`,
        [scope, kind, runId, startedAt, now + leaseMs, now],
      );
      if (taken.length === 1) {
        const expired = previous[0]?.run_id;
        if (expired !== undefined && expired !== runId) await query(`UPDATE ${runs} SET outcome = 'interrupted' WHERE run_id = $1 AND outcome = 'running'`, [expired]);
        return null;
      }
      const held = await query<{ run_id: string; started_at: string }>(`SELECT run_id, started_at FROM ${leases} WHERE scope = $1 AND kind = $2`, [scope, kind]);
      // Released between the two statements: try once more.
      if (held.length === 0) return this.acquireLease({ scope, kind, runId, startedAt, now, leaseMs });
      return { runId: held[0]!.run_id, startedAt: Number(held[0]!.started_at) };
    },

    renewLease: async ({ scope, kind, runId, now, leaseMs }) =>
      (await changes(`UPDATE ${leases} SET expires_at = $1 WHERE scope = $2 AND kind = $3 AND run_id = $4`, [now + leaseMs, scope, kind, runId])) === 1,

    async releaseLease({ scope, kind, runId }) {
      await query(`DELETE FROM ${leases} WHERE scope = $1 AND kind = $2 AND run_id = $3`, [scope, kind, runId]);
    },

    async startRun(run) {
      const rows = await query<{ seq: string }>(
        `INSERT INTO ${runs} (run_id, scope, kind, base_url, merchant_id, is_full, started_at, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, 'running') RETURNING seq`,
        [run.runId, run.scope, run.kind, run.baseUrl, run.merchantId, run.full, run.startedAt],
      );
      return Number(rows[0]!.seq);
    },

    async finishRun(runId, finished) {
      const values = finishedValues(finished, (complete) => complete);
      await query(`UPDATE ${runs} SET ${FINISHED_COLUMNS.map((column, i) => `${column} = $${i + 1}`).join(', ')} WHERE run_id = $${values.length + 1}`, [...values, runId]);
    },

    async lookup(scope, kind, keys) {
      const rows = await query<{ key: string; fingerprint: string | null; sent_at: string | null; seen_seq: string | null; seen_index: string | null }>(
        `SELECT key, fingerprint, sent_at, seen_seq, seen_index FROM ${items} WHERE scope = $1 AND kind = $2 AND key = ANY($3::text[])`,
        [scope, kind, keys],
      );
      return storedItemsByKey(rows);
    },

    async markSeen(scope, kind, seq, marks) {
      if (marks.length === 0) return;
      await migrate();
      await db.query(...markSeenStatement(scope, kind, seq, marks));
    },

    async recordBatch({ scope, kind, runId, sentAt, seen, acknowledged, errors }) {
      if (seen.marks.length === 0 && acknowledged.length === 0 && errors.length === 0) return;
      await migrate();
      const client = await (await db.get()).connect();
      try {
        await client.query('BEGIN');
        if (seen.marks.length > 0) await client.query(...markSeenStatement(scope, kind, seen.seq, seen.marks));
        if (acknowledged.length > 0) {
          await client.query(
            `INSERT INTO ${items} (scope, kind, key, external_id, store_id, fingerprint, sent_at, store_ids, seen_seq, seen_index)
             SELECT $1, $2, k, e, s, f, $3, string_to_array(ids, ' '), $9, i FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $10::bigint[]) AS t(k, e, s, f, ids, i)
             ON CONFLICT (scope, kind, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, sent_at = EXCLUDED.sent_at, store_ids = EXCLUDED.store_ids,
               seen_seq = EXCLUDED.seen_seq, seen_index = EXCLUDED.seen_index`,
            [
              scope,
              kind,
              sentAt,
              acknowledged.map((a) => a.key),
              acknowledged.map((a) => a.externalId),
              acknowledged.map((a) => a.storeId),
              acknowledged.map((a) => a.fingerprint),
              // Store ids are UUIDs (checked before sending): a space cannot occur in one.
              acknowledged.map((a) => a.storeIds.join(' ')),
              seen.seq,
              acknowledged.map((a) => a.index),
            ],
          );
        }
        if (errors.length > 0) {
          await client.query(
            `INSERT INTO ${runErrors} (run_id, idx, external_id, store_id, code, message)
             SELECT $1, i, e, s, c, m FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(i, e, s, c, m)
             ON CONFLICT (run_id, idx) DO NOTHING`,
            [runId, errors.map((e) => e.index), errors.map((e) => e.external_id), errors.map((e) => e.store_id ?? null), errors.map((e) => e.code), errors.map((e) => e.message)],
          );
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },

    async orphans(scope, kind, seq, afterKey, limit) {
      const rows = await query<{ key: string; external_id: string; store_id: string; store_ids: string[] | null; sent_at: string }>(
        `SELECT key, external_id, store_id, store_ids, sent_at FROM ${items}
         WHERE scope = $1 AND kind = $2 AND fingerprint IS NOT NULL AND (seen_seq IS NULL OR seen_seq < $3) AND key COLLATE "C" > $4
         ORDER BY key COLLATE "C" LIMIT $5`,
        [scope, kind, seq, afterKey ?? '', limit],
      );
      return rows.map((row) => ({ key: row.key, externalId: row.external_id, storeId: row.store_id, storeIds: row.store_ids ?? [], sentAt: Number(row.sent_at) }));
    },

    async countOrphans(scope, kind, seq) {
      const rows = await query<{ n: string }>(
        `SELECT count(*) AS n FROM ${items} WHERE scope = $1 AND kind = $2 AND fingerprint IS NOT NULL AND (seen_seq IS NULL OR seen_seq < $3)`,
        [scope, kind, seq],
      );
      return Number(rows[0]!.n);
    },

    // By `external_id`: a scan of the scope and kind, with no index on it (see the SQLite state).
    forget: (scope, kind, externalIds) =>
      externalIds === undefined
        ? changes(`DELETE FROM ${items} WHERE scope = $1 AND kind = $2`, [scope, kind])
        : changes(`DELETE FROM ${items} WHERE scope = $1 AND kind = $2 AND external_id = ANY($3::text[])`, [scope, kind, externalIds]),

    forgetKeys: (scope, kind, keys) => changes(`DELETE FROM ${items} WHERE scope = $1 AND kind = $2 AND key = ANY($3::text[])`, [scope, kind, keys]),

    async lastCompleteRun(scope, kind) {
      const rows = await query<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${runs} WHERE scope = $1 AND kind = $2 AND complete ORDER BY seq DESC LIMIT 1`, [scope, kind]);
      return rows[0] ? runRow(rows[0]) : null;
    },

    async runs(limit, beforeSeq) {
      const rows = await query<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${runs} WHERE seq < $1 ORDER BY seq DESC LIMIT $2`, [beforeSeq ?? Number.MAX_SAFE_INTEGER, limit]);
      return rows.map(runRow);
    },

    async run(runId) {
      const rows = await query<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${runs} WHERE run_id = $1`, [runId]);
      return rows[0] ? runRow(rows[0]) : null;
    },

    async runErrors(runId, afterIndex, limit) {
      const rows = await query<{ idx: string; external_id: string; store_id: string | null; code: string; message: string }>(
        `SELECT idx, external_id, store_id, code, message FROM ${runErrors} WHERE run_id = $1 AND idx > $2 ORDER BY idx LIMIT $3`,
        [runId, afterIndex, limit],
      );
      return rows.map(runErrorFromRow);
    },

    close: () => db.close(),
  };
}
