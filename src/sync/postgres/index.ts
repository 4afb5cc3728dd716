/**
 * `integration-sdk/sync/postgres`: the sync's state on Postgres, in its own schema (default
 * `integration_sync`), so that the inbox's database can hold it too and several processes can share
 * it (one run per scope and kind at a time, by lease). Needs `pg` ≥ 8, an optional peer dependency.
 */
import { checkPostgresOptions, postgresPool, type PostgresConnectionOptions } from '../../storage/postgres.ts';
import type { SyncState } from '../state.ts';
import { stateFailure } from '../state-errors.ts';
import { itemStatements, type Statement } from './item-statements.ts';
import { createTables, tablesOf } from './schema.ts';
import { FINISHED_COLUMNS, finishedValues, runErrorFromRow, runFromRow, storedItemsByKey, type RunRow } from '../state-rows.ts';

export type { PostgresConnectionOptions } from '../../storage/postgres.ts';

/** Options of {@link postgresSyncState}: a connection string (or pool config), or an existing pool. */
export interface PostgresSyncStateOptions extends PostgresConnectionOptions {
  /** The schema holding the sync's tables, created on first use. @default 'integration_sync' */
  schema?: string;
}

const RUN_COLUMNS = 'seq, run_id, scope, kind, base_url, merchant_id, is_full, started_at, finished_at, outcome, complete, total, unchanged, sent, created, updated, errors, orphans, error';

/** Where the state is, for messages: host, port, database and schema, never the user or password. */
function describeLocation(options: PostgresSyncStateOptions, schema: string): string {
  if (options.pool) return `Postgres, the pool given, schema ${schema}`;
  const raw = options.connectionString ?? '';
  try {
    const url = new URL(raw);
    return `Postgres at ${url.host}${url.pathname}, schema ${schema}`;
  } catch {
    const host = options.poolConfig?.host;
    return `Postgres${host ? ` at ${host}` : ''}, schema ${schema}`;
  }
}

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
  const { items, runs, runErrors, leases } = tablesOf(schema);
  const where = { state: describeLocation(options, schema) };
  /** Runs `operation`, a driver's failure becoming one sentence that names the state. */
  async function named<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw stateFailure(error, where);
    }
  }

  const migrateTables = () => db.migrateOnce(`integration-sdk-sync:${schema}`, (client) => createTables(client, schema));
  const migrate = () => named(migrateTables);

  async function query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    await migrate();
    return named(() => db.query<R>(sql, params));
  }
  async function changes(sql: string, params: unknown[] = []): Promise<number> {
    await migrate();
    return named(() => db.changes(sql, params));
  }
  /** Runs the statements in one transaction. */
  async function transaction(statements: readonly Statement[]): Promise<void> {
    if (statements.length === 0) return;
    await migrate();
    await named(async () => {
      const client = await (await db.get()).connect();
      try {
        await client.query('BEGIN');
        for (const [sql, params] of statements) await client.query(sql, params);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    });
  }
  const runRow = (row: RunRow) => runFromRow(row);
  const { markSeenStatement, inFlightStatement, overwriteStatements, acknowledgeStatement } = itemStatements(items);

  return {
    migrate,

    async acquireLease({ scope, kind, runId, startedAt, now, leaseMs, host, pid, replacing }) {
      // Taken only when free, expired, or held by the run named gone: concurrent takers race on the row, and one wins.
      const previous = await query<{ run_id: string }>(`SELECT run_id FROM ${leases} WHERE scope = $1 AND kind = $2`, [scope, kind]);
      const taken = await query<{ run_id: string }>(
        `INSERT INTO ${leases} (scope, kind, run_id, started_at, expires_at, host, pid) VALUES ($1, $2, $3, $4, $5, $7, $8)
         ON CONFLICT (scope, kind) DO UPDATE SET run_id = EXCLUDED.run_id, started_at = EXCLUDED.started_at, expires_at = EXCLUDED.expires_at, host = EXCLUDED.host, pid = EXCLUDED.pid
         WHERE ${leases}.expires_at <= $6 OR ${leases}.run_id = EXCLUDED.run_id OR ${leases}.run_id = $9
         RETURNING run_id`,
        [scope, kind, runId, startedAt, now + leaseMs, now, host ?? null, pid ?? null, replacing ?? null],
      );
      if (taken.length === 1) {
        const expired = previous[0]?.run_id;
        if (expired !== undefined && expired !== runId) await query(`UPDATE ${runs} SET outcome = 'interrupted' WHERE run_id = $1 AND outcome = 'running'`, [expired]);
        return null;
      }
      const held = await query<{ run_id: string; started_at: string; host: string | null; pid: number | null }>(`SELECT run_id, started_at, host, pid FROM ${leases} WHERE scope = $1 AND kind = $2`, [scope, kind]);
      // Released between the two statements: try once more.
      if (held.length === 0) return this.acquireLease({ scope, kind, runId, startedAt, now, leaseMs, host, pid, replacing });
      const holder = held[0]!;
      return { runId: holder.run_id, startedAt: Number(holder.started_at), host: holder.host, pid: holder.pid === null ? null : Number(holder.pid) };
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
      const rows = await query<{ key: string; fingerprint: string | null; sent_at: string | null; seen_seq: string | null; seen_index: string | null; in_flight: boolean }>(
        `SELECT key, fingerprint, sent_at, seen_seq, seen_index, in_flight FROM ${items} WHERE scope = $1 AND kind = $2 AND key = ANY($3::text[])`,
        [scope, kind, keys],
      );
      return storedItemsByKey(rows);
    },

    async markSeen(scope, kind, seq, marks) {
      if (marks.length === 0) return;
      await query(...markSeenStatement(scope, kind, seq, marks));
    },

    async markInFlight({ scope, kind, seq, items: marked }) {
      if (marked.length === 0) return;
      await transaction([inFlightStatement(scope, kind, seq, marked), ...overwriteStatements(scope, kind, marked.flatMap((item) => item.pairs))]);
    },

    async recordBatch({ scope, kind, runId, sentAt, seen, acknowledged, errors }) {
      const statements: Statement[] = [];
      if (seen.marks.length > 0) statements.push(markSeenStatement(scope, kind, seen.seq, seen.marks));
      if (acknowledged.length > 0) {
        statements.push(acknowledgeStatement(scope, kind, sentAt, seen.seq, acknowledged));
        statements.push(...overwriteStatements(scope, kind, acknowledged.flatMap((item) => item.pairs ?? [])));
      }
      if (errors.length > 0) {
        statements.push([
          `INSERT INTO ${runErrors} (run_id, idx, external_id, store_id, code, message)
           SELECT $1, i, e, s, c, m FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(i, e, s, c, m)
           ON CONFLICT (run_id, idx) DO NOTHING`,
          [runId, errors.map((e) => e.index), errors.map((e) => e.external_id), errors.map((e) => e.store_id ?? null), errors.map((e) => e.code), errors.map((e) => e.message)],
        ]);
      }
      await transaction(statements);
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

    async countAcknowledged(scope, kind) {
      const rows = await query<{ n: string }>(`SELECT count(*) AS n FROM ${items} WHERE scope = $1 AND kind = $2 AND fingerprint IS NOT NULL`, [scope, kind]);
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

    async runs(limit, beforeSeq, scope) {
      const rows = await query<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${runs} WHERE seq < $1 AND ($3::text IS NULL OR scope = $3) ORDER BY seq DESC LIMIT $2`, [
        beforeSeq ?? Number.MAX_SAFE_INTEGER,
        limit,
        scope ?? null,
      ]);
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
