/**
 * The Postgres side of `missed`: the last reconcile's record and each missed delivery from the
 * reconcile that first found it until it arrives, is acknowledged (who, when) or is recovered.
 */
import type { PoolClient } from 'pg';
import type { PostgresPool } from '../../storage/postgres.ts';
import { missedFromRow, type InboxStore, type MissedDelivery, type MissedRow, type ReconcileRecord } from '../store.ts';

const COLUMNS = 'delivery_id, event, status, endpoint_id, last_error, created_at, attempt_count, gives_up_at, first_seen_at, ended, ended_at, ended_by';

/** Upserts misses: each row of `missed` as `$n` parameters; returns the ids it inserted. */
async function upsertMissed(
  run: (sql: string, params: unknown[]) => Promise<{ delivery_id: string; inserted: boolean }[]>,
  table: string,
  all: readonly MissedDelivery[],
  now: number,
  tenant = '',
): Promise<string[]> {
  // One row per id: ON CONFLICT DO UPDATE may not touch a row twice in one statement.
  const missed = [...new Map(all.map((each) => [each.deliveryId, each])).values()];
  if (missed.length === 0) return [];
  const column = <K extends keyof MissedDelivery>(key: K) => missed.map((each) => each[key]);
  // xmax = 0 only on a row this statement inserted.
  const rows = await run(
    `INSERT INTO ${table} (delivery_id, event, status, endpoint_id, last_error, created_at, attempt_count, gives_up_at, first_seen_at, tenant)
     SELECT *, $9::bigint, $10::text FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[])
     ON CONFLICT (delivery_id) DO UPDATE SET status = EXCLUDED.status, last_error = EXCLUDED.last_error,
       attempt_count = EXCLUDED.attempt_count, gives_up_at = EXCLUDED.gives_up_at
     RETURNING delivery_id, (xmax = 0) AS inserted`,
    [column('deliveryId'), column('event'), column('status'), column('endpointId'), column('lastError'), column('createdAt'), column('attemptCount'), column('givesUpAt'), now, tenant],
  );
  return rows.filter((row) => row.inserted).map((row) => row.delivery_id);
}

/**
 * Creates the missed table; a database an earlier version wrote keeps the misses its last reconcile
 * listed, open from when that reconcile ran.
 */
export async function migrateMissed(client: PoolClient, schema: string): Promise<void> {
  const table = `"${schema}".inbox_missed`;
  const [existing] = (await client.query<{ found: string | null }>(`SELECT to_regclass($1) AS found`, [table])).rows;
  if (existing?.found) {
    await migrateMissedTenants(client, schema);
    return;
  }
  // ALTER TABLE takes the table's strongest lock even when there is nothing to add: only once.
  await client.query(`ALTER TABLE "${schema}".inbox_reconcile_runs ADD COLUMN IF NOT EXISTS endpoint_ids TEXT`);
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${table} (
      delivery_id TEXT PRIMARY KEY,
      event TEXT NOT NULL,
      status TEXT NOT NULL,
      endpoint_id TEXT NOT NULL,
      last_error TEXT,
      created_at TEXT NOT NULL,
      attempt_count INTEGER NOT NULL,
      gives_up_at TEXT,
      first_seen_at BIGINT NOT NULL,
      ended TEXT,
      ended_at BIGINT,
      ended_by TEXT,
      tenant TEXT NOT NULL DEFAULT ''
    )`);
  await client.query(`CREATE INDEX IF NOT EXISTS inbox_missed_open ON ${table} (created_at, delivery_id) WHERE ended IS NULL`);
  await client.query(`CREATE INDEX IF NOT EXISTS inbox_missed_ended ON ${table} (ended_at) WHERE ended IS NOT NULL`);
  const [last] = (await client.query<{ ran_at: string; missed: string }>(`SELECT ran_at, missed FROM "${schema}".inbox_reconcile_runs WHERE id = 1`)).rows;
  if (last) await upsertMissed(async (sql, params) => (await client.query(sql, params)).rows, table, JSON.parse(last.missed) as MissedDelivery[], Number(last.ran_at));
  await migrateMissedTenants(client, schema);
}

/** Issue 28: each tenant's misses and last reconcile. Tables an earlier version made get a `tenant` column (their rows: `''`). */
async function migrateMissedTenants(client: PoolClient, schema: string): Promise<void> {
  const { rowCount } = await client.query(`SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_missed' AND column_name = 'tenant'`, [schema]);
  // ALTER TABLE takes the table's strongest lock even when there is nothing to add: only once.
  if (rowCount === 0) await client.query(`ALTER TABLE "${schema}".inbox_missed ADD COLUMN IF NOT EXISTS tenant TEXT NOT NULL DEFAULT ''`);
  await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".inbox_reconcile_tenants (tenant TEXT PRIMARY KEY, ran_at BIGINT NOT NULL, missed TEXT NOT NULL, endpoint_ids TEXT)`);
}

/** The store's reconcile record and missed methods, on the store's pool (migrated first by `migrate`). */
export function postgresMissedMethods(
  db: PostgresPool,
  schema: string,
  migrate: () => Promise<void>,
): Required<Pick<InboxStore, 'saveReconcile' | 'lastReconcile' | 'reconciledAt' | 'recordMissed' | 'listMissed' | 'endMissed'>> {
  const runs = `"${schema}".inbox_reconcile_runs`;
  const tenantRuns = `"${schema}".inbox_reconcile_tenants`;
  const table = `"${schema}".inbox_missed`;
  return {
    async saveReconcile(record: ReconcileRecord) {
      await migrate();
      const endpointIds = record.endpointIds === undefined ? null : JSON.stringify(record.endpointIds);
      if (record.tenant) {
        await db.changes(
          `INSERT INTO ${tenantRuns} (tenant, ran_at, missed, endpoint_ids) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant) DO UPDATE SET ran_at = EXCLUDED.ran_at, missed = EXCLUDED.missed, endpoint_ids = EXCLUDED.endpoint_ids`,
          [record.tenant, record.ranAt, JSON.stringify(record.missed), endpointIds],
        );
        return;
      }
      await db.changes(
        `INSERT INTO ${runs} (id, ran_at, missed, endpoint_ids) VALUES (1, $1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET ran_at = EXCLUDED.ran_at, missed = EXCLUDED.missed, endpoint_ids = EXCLUDED.endpoint_ids`,
        [record.ranAt, JSON.stringify(record.missed), record.endpointIds === undefined ? null : JSON.stringify(record.endpointIds)],
      );
    },

    async lastReconcile(tenant) {
      await migrate();
      const [row] = tenant
        ? await db.query<{ ran_at: string; missed: string; endpoint_ids: string | null }>(`SELECT ran_at, missed, endpoint_ids FROM ${tenantRuns} WHERE tenant = $1`, [tenant])
        : await db.query<{ ran_at: string; missed: string; endpoint_ids: string | null }>(`SELECT ran_at, missed, endpoint_ids FROM ${runs} WHERE id = 1`);
      if (!row) return undefined;
      const record: ReconcileRecord = { ...(tenant ? { tenant } : {}), ranAt: Number(row.ran_at), missed: JSON.parse(row.missed) as ReconcileRecord['missed'] };
      return row.endpoint_ids === null ? record : { ...record, endpointIds: JSON.parse(row.endpoint_ids) as string[] };
    },

    async reconciledAt(tenants) {
      await migrate();
      const rows = await db.query<{ tenant: string; ran_at: string }>(`SELECT tenant, ran_at FROM ${tenantRuns} WHERE tenant = ANY($1::text[])`, [[...tenants]]);
      return new Map(rows.map((row) => [row.tenant, Number(row.ran_at)]));
    },

    async recordMissed(missed, now, tenant) {
      await migrate();
      return upsertMissed((sql, params) => db.query(sql, params), table, missed, now, tenant ?? '');
    },

    async listMissed({ open, limit, tenant }) {
      await migrate();
      const rows = await db.query<MissedRow>(
        open
          ? `SELECT ${COLUMNS}, tenant FROM ${table} WHERE ended IS NULL AND ($2::text IS NULL OR tenant = $2) ORDER BY created_at, delivery_id LIMIT $1`
          : `SELECT ${COLUMNS}, tenant FROM ${table} WHERE ended IS NOT NULL AND ($2::text IS NULL OR tenant = $2) ORDER BY ended_at DESC, delivery_id LIMIT $1`,
        [limit, tenant ?? null],
      );
      return rows.map(missedFromRow);
    },

    async endMissed({ deliveryIds, how, at, by, tenant }) {
      await migrate();
      const rows = await db.query<{ delivery_id: string }>(
        `UPDATE ${table} SET ended = $1, ended_at = $2, ended_by = $3
         WHERE ended IS NULL AND ($4::text[] IS NULL OR delivery_id = ANY($4::text[])) AND ($5::text IS NULL OR tenant = $5) RETURNING delivery_id`,
        [how, at, by, deliveryIds === 'all' ? null : [...deliveryIds], tenant ?? null],
      );
      return rows.map((row) => row.delivery_id);
    },
  };
}
