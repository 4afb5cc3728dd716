/**
 * `integration-sdk/tenants/postgres`: the tenants registry on Postgres, in its own schema (default
 * `integration_tenants`), so that the inbox's and the sync's database can hold it too and every
 * process and machine shares one registry. Needs `pg` ≥ 8, an optional peer dependency.
 * Credentials arrive sealed: no column holds a key or a secret in clear.
 */
import type { PoolClient } from 'pg';
import { checkPostgresOptions, postgresPool, type PostgresConnectionOptions } from '../../storage/postgres.ts';
import { planConnect } from '../connect-plan.ts';
import { SECRET_CHANGES_KEPT, type ConnectIntent, type ConnectIntentResult, type TenantRotationOwner, type TenantStatus, type TenantStore } from '../store.ts';
import type { TenantRotationRecord } from '../store.ts';
import {
  mayTake,
  recordFromRow,
  RETIRING_PLACE,
  ROTATION_COLUMNS,
  rotationFromRow,
  sealedCursor,
  sealedFromRow,
  SECRET_COLUMNS,
  secretFromRow,
  TENANT_COLUMNS,
  type RotationRow,
  type SealedRow,
  type SecretRow,
  type TenantRow,
} from '../store-rows.ts';

export type { PostgresConnectionOptions } from '../../storage/postgres.ts';

/** Options of {@link postgresTenantStore}: a connection string (or pool config), or an existing pool. */
export interface PostgresTenantStoreOptions extends PostgresConnectionOptions {
  /** The schema holding the tenants tables, created on first use. @default 'integration_tenants' */
  schema?: string;
}

/**
 * The tenants registry on Postgres.
 *
 * @example
 * ```ts
 * import { createTenants } from 'integration-sdk/tenants';
 * import { postgresTenantStore } from 'integration-sdk/tenants/postgres';
 *
 * const tenants = createTenants({
 *   store: postgresTenantStore({ connectionString: process.env.DATABASE_URL }),
 *   encryptionKey: process.env.TENANTS_KEY!,
 *   baseUrl: 'https://platform.example.com',
 *   webhookUrl: (id) => `https://erp.example.com/webhooks/integration/${id}`,
 * });
 * ```
 */
export function postgresTenantStore(options: PostgresTenantStoreOptions): TenantStore {
  const schema = checkPostgresOptions('postgresTenantStore', options, options?.schema ?? 'integration_tenants');
  const db = postgresPool('postgresTenantStore', options);
  const tenants = `"${schema}".tenants`;
  const secrets = `"${schema}".secrets`;
  const meta = `"${schema}".meta`;
  const rotations = `"${schema}".rotations`;
  const secretChanges = `"${schema}".secret_changes`;

  const migrate = () =>
    db.migrateOnce(`integration-sdk-tenants:${schema}`, async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${tenants} (
          id TEXT PRIMARY KEY,
          merchant_id TEXT NOT NULL,
          store_ids TEXT[] NOT NULL,
          scopes TEXT[] NOT NULL,
          status TEXT NOT NULL,
          api_key TEXT,
          key_generation BIGINT NOT NULL DEFAULT 1,
          endpoint_id TEXT,
          allow_same_merchant BOOLEAN NOT NULL DEFAULT false,
          connected_at BIGINT,
          key_invalid_at BIGINT,
          disconnected_at BIGINT,
          updated_at BIGINT NOT NULL
        )`);
      await client.query(`CREATE INDEX IF NOT EXISTS tenants_merchant ON ${tenants} (merchant_id)`);
      await client.query(`CREATE INDEX IF NOT EXISTS tenants_status ON ${tenants} (status, id)`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${secrets} (
          tenant_id TEXT NOT NULL,
          endpoint_id TEXT NOT NULL,
          secret TEXT NOT NULL,
          created_at BIGINT NOT NULL,
          PRIMARY KEY (tenant_id, endpoint_id)
        )`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${meta} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${rotations} (
          tenant_id TEXT PRIMARY KEY,
          step TEXT NOT NULL,
          old_endpoint_id TEXT NOT NULL,
          new_endpoint_id TEXT,
          started_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL
        )`);
      // Added for receivers (issue 28): a rotation in progress, the first verification of each
      // secret, and the numbered changes receivers in every process forget their cache by. Each
      // ALTER only when needed: it takes the table's strongest lock even when there is nothing to add.
      const { rows } = await client.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND column_name IN ('rotating_since', 'verified_at')`,
        [schema],
      );
      const has = (table: string, column: string) => rows.some((row) => row.table_name === table && row.column_name === column);
      if (!has('tenants', 'rotating_since')) await client.query(`ALTER TABLE ${tenants} ADD COLUMN IF NOT EXISTS rotating_since BIGINT`);
      if (!has('secrets', 'verified_at')) await client.query(`ALTER TABLE ${secrets} ADD COLUMN IF NOT EXISTS verified_at BIGINT`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${secretChanges} (seq BIGSERIAL PRIMARY KEY, tenant_id TEXT NOT NULL)`);
      // Added by the review fixes: a rotation for a new key (its old key kept sealed), and its owner's lease.
      const rotationColumns = (
        await client.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'rotations'`, [schema])
      ).rows.map((row) => row.column_name);
      if (!rotationColumns.includes('lease_until')) {
        await client.query(`ALTER TABLE ${rotations} ADD COLUMN IF NOT EXISTS kind TEXT NOT NULL DEFAULT 'secret', ADD COLUMN IF NOT EXISTS retiring_key TEXT,
          ADD COLUMN IF NOT EXISTS owner_token TEXT, ADD COLUMN IF NOT EXISTS owner_host TEXT, ADD COLUMN IF NOT EXISTS owner_pid INTEGER, ADD COLUMN IF NOT EXISTS lease_until BIGINT`);
      }
    });

  async function query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    await migrate();
    return db.query<R>(sql, params);
  }
  async function changes(sql: string, params: unknown[] = []): Promise<number> {
    await migrate();
    return db.changes(sql, params);
  }
  async function transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    await migrate();
    const client = await (await db.get()).connect();
    try {
      await client.query('BEGIN');
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
  const one = async (sql: string, params: unknown[]) => {
    const [row] = await query<TenantRow>(sql, params);
    return row ? recordFromRow(row) : null;
  };

  /**
   * Numbers a change of what receivers accept for the tenant (TenantStore.secretChanges), as a
   * statement of its own to put in a CTE or a transaction, and forgets the ones older than the
   * latest SECRET_CHANGES_KEPT now and then.
   */
  const logChangeSql = `INSERT INTO ${secretChanges} (tenant_id) VALUES ($1) RETURNING seq`;
  async function pruneChanges(seq: number | string | undefined): Promise<void> {
    if (seq !== undefined && Number(seq) % 100 === 0) await db.changes(`DELETE FROM ${secretChanges} WHERE seq <= $1`, [Number(seq) - SECRET_CHANGES_KEPT]);
  }
  /** One statement that changes the tenant (`sql` RETURNING its row) and numbers the change when a row changed. */
  async function changing(sql: string, params: unknown[]) {
    const [row] = await query<TenantRow & { change_seq: string | null }>(
      `WITH changed AS (${sql}), logged AS (INSERT INTO ${secretChanges} (tenant_id) SELECT id FROM changed RETURNING seq)
       SELECT changed.*, (SELECT max(seq) FROM logged) AS change_seq FROM changed`,
      params,
    );
    await pruneChanges(row?.change_seq ?? undefined);
    return row ? recordFromRow(row) : null;
  }

  async function setOwner(client: PoolClient, tenantId: string, owner: TenantRotationOwner | null): Promise<void> {
    await client.query(`UPDATE ${rotations} SET owner_token = $2, owner_host = $3, owner_pid = $4, lease_until = $5 WHERE tenant_id = $1`, [
      tenantId,
      owner?.token ?? null,
      owner?.host ?? null,
      owner?.pid ?? null,
      owner?.leaseUntil ?? null,
    ]);
  }
  async function rotationOf(client: PoolClient, tenantId: string, lock = ''): Promise<TenantRotationRecord | null> {
    const [row] = (await client.query<RotationRow>(`SELECT ${ROTATION_COLUMNS} FROM ${rotations} WHERE tenant_id = $1 ${lock}`, [tenantId])).rows;
    return row ? rotationFromRow(row) : null;
  }

  async function beginConnect(client: PoolClient, intent: ConnectIntent): Promise<ConnectIntentResult> {
    // Two connects of one merchant under two ids, in two processes, take turns here.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`integration-sdk-tenants-merchant:${schema}:${intent.merchantId}`]);
    const [row] = (await client.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${tenants} WHERE id = $1 FOR UPDATE`, [intent.id])).rows;
    const current = row ? recordFromRow(row) : null;
    const rotation = await rotationOf(client, intent.id, 'FOR UPDATE');
    const [other] = (
      await client.query<{ id: string }>(`SELECT id FROM ${tenants} WHERE merchant_id = $1 AND id <> $2 AND status <> 'disconnected' ORDER BY id LIMIT 1`, [intent.merchantId, intent.id])
    ).rows;
    const plan = planConnect(intent, current, rotation, other?.id ?? null);
    if (plan.outcome === 'key_change_pending') {
      await setOwner(client, intent.id, intent.owner);
      return { outcome: 'key_change_pending', record: current!, rotation: (await rotationOf(client, intent.id))! };
    }
    if (plan.outcome !== 'write') return plan;
    const { status } = plan;
    await client.query(
      `INSERT INTO ${tenants} AS t (id, merchant_id, store_ids, scopes, status, api_key, key_generation, allow_same_merchant, connected_at, key_invalid_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (id) DO UPDATE SET merchant_id = EXCLUDED.merchant_id, store_ids = EXCLUDED.store_ids, scopes = EXCLUDED.scopes,
         status = EXCLUDED.status, api_key = EXCLUDED.api_key, key_generation = EXCLUDED.key_generation,
         allow_same_merchant = EXCLUDED.allow_same_merchant, disconnected_at = NULL, updated_at = EXCLUDED.updated_at,
         connected_at = EXCLUDED.connected_at, key_invalid_at = EXCLUDED.key_invalid_at`,
      [intent.id, intent.merchantId, intent.storeIds, intent.scopes, status, intent.apiKey, plan.keyGeneration, intent.allowSameMerchant, plan.connectedAt, plan.keyInvalidAt, intent.at],
    );
    let changedWhatReceiversAccept = current?.status !== status;
    if (plan.rotation.action === 'begin') {
      const { oldEndpointId, retiringKey } = plan.rotation.change;
      await client.query(
        `INSERT INTO ${rotations} (tenant_id, kind, step, old_endpoint_id, new_endpoint_id, retiring_key, started_at, updated_at) VALUES ($1, 'key', 'registering', $2, NULL, $3, $4, $4)
         ON CONFLICT (tenant_id) DO UPDATE SET kind = 'key', step = 'registering', old_endpoint_id = $2, new_endpoint_id = NULL, retiring_key = $3, started_at = $4, updated_at = $4`,
        [intent.id, oldEndpointId, retiringKey, intent.at],
      );
      await setOwner(client, intent.id, intent.owner);
      // Receivers hold what no secret verifies from now on: the new key's endpoint may deliver before its secret is stored.
      await client.query(`UPDATE ${tenants} SET rotating_since = $2 WHERE id = $1`, [intent.id, intent.at]);
      changedWhatReceiversAccept = true;
    } else if (plan.rotation.action === 'claim') {
      await setOwner(client, intent.id, intent.owner);
    }
    if (changedWhatReceiversAccept) await client.query(logChangeSql, [intent.id]);
    const [written] = (await client.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${tenants} WHERE id = $1`, [intent.id])).rows;
    return { outcome: 'ok', record: recordFromRow(written!), rotation: plan.rotation.action === 'none' ? null : await rotationOf(client, intent.id) };
  }

  return {
    migrate,

    get: (id) => one(`SELECT ${TENANT_COLUMNS} FROM ${tenants} WHERE id = $1`, [id]),

    list: async ({ statuses, after, limit }) =>
      (
        statuses
          ? await query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${tenants} WHERE status = ANY($1::text[]) AND id COLLATE "C" > $2 ORDER BY id COLLATE "C" LIMIT $3`, [statuses, after ?? '', limit])
          : await query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${tenants} WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`, [after ?? '', limit])
      ).map(recordFromRow),

    countByStatus: async () => {
      const rows = await query<{ status: TenantStatus; n: string }>(`SELECT status, count(*) AS n FROM ${tenants} GROUP BY status`);
      return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    },

    beginConnect: (intent) => transaction((client) => beginConnect(client, intent)),

    finishConnect: (id, endpointId, at) =>
      changing(
        `UPDATE ${tenants} SET status = 'active', endpoint_id = $2, connected_at = coalesce(connected_at, $3), key_invalid_at = NULL, updated_at = $3
         WHERE id = $1 AND status IN ('connecting', 'active', 'key_invalid') RETURNING ${TENANT_COLUMNS}`,
        [id, endpointId, at],
      ),

    putSecret: async ({ tenantId, endpointId, secret, createdAt }) => {
      const [row] = await query<{ seq: string }>(
        `WITH put AS (
           INSERT INTO ${secrets} (tenant_id, endpoint_id, secret, created_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id, endpoint_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = EXCLUDED.created_at, verified_at = NULL
           RETURNING tenant_id)
         INSERT INTO ${secretChanges} (tenant_id) SELECT tenant_id FROM put RETURNING seq`,
        [tenantId, endpointId, secret, createdAt],
      );
      await pruneChanges(row?.seq);
    },

    deleteSecret: async (tenantId, endpointId) => {
      const [row] = await query<{ seq: string }>(
        `WITH gone AS (DELETE FROM ${secrets} WHERE tenant_id = $1 AND endpoint_id = $2 RETURNING tenant_id)
         INSERT INTO ${secretChanges} (tenant_id) SELECT tenant_id FROM gone RETURNING seq`,
        [tenantId, endpointId],
      );
      await pruneChanges(row?.seq);
    },

    secrets: async (tenantId) =>
      (await query<SecretRow>(`SELECT ${SECRET_COLUMNS} FROM ${secrets} WHERE tenant_id = $1 ORDER BY created_at DESC, endpoint_id COLLATE "C"`, [tenantId])).map(secretFromRow),

    markSecretVerified: async (tenantId, endpointId, at) =>
      (await changes(`UPDATE ${secrets} SET verified_at = $3 WHERE tenant_id = $1 AND endpoint_id = $2 AND verified_at IS NULL`, [tenantId, endpointId, at])) > 0,

    setRotating: async (tenantId, since) => (await changing(`UPDATE ${tenants} SET rotating_since = $2 WHERE id = $1 RETURNING ${TENANT_COLUMNS}`, [tenantId, since])) !== null,

    secretChanges: async (after, limit) => {
      const [rows, latest] = await Promise.all([
        query<{ seq: string; tenant_id: string }>(`SELECT seq, tenant_id FROM ${secretChanges} WHERE seq > $1 ORDER BY seq LIMIT $2`, [after, limit]),
        query<{ latest: string | null }>(`SELECT max(seq) AS latest FROM ${secretChanges}`),
      ]);
      return { changes: rows.map((row) => ({ seq: Number(row.seq), tenantId: row.tenant_id })), latest: Number(latest[0]?.latest ?? 0) };
    },

    markKeyInvalid: async (id, keyGeneration, at) =>
      (await changing(
        `UPDATE ${tenants} SET status = 'key_invalid', key_invalid_at = $3, updated_at = $3 WHERE id = $1 AND key_generation = $2 AND status IN ('active', 'connecting') RETURNING ${TENANT_COLUMNS}`,
        [id, keyGeneration, at],
      )) !== null,

    beginDisconnect: (id, at) =>
      changing(`UPDATE ${tenants} SET status = 'disconnecting', updated_at = $2 WHERE id = $1 AND status <> 'disconnected' RETURNING ${TENANT_COLUMNS}`, [id, at]),

    finishDisconnect: (id, at) =>
      transaction(async (client) => {
        const [row] = (
          await client.query<TenantRow>(
            `UPDATE ${tenants} SET status = 'disconnected', api_key = NULL, endpoint_id = NULL, disconnected_at = $2, updated_at = $2
             WHERE id = $1 AND status = 'disconnecting' RETURNING ${TENANT_COLUMNS}`,
            [id, at],
          )
        ).rows;
        if (!row) return null;
        await client.query(`DELETE FROM ${secrets} WHERE tenant_id = $1`, [id]);
        await client.query(`DELETE FROM ${rotations} WHERE tenant_id = $1`, [id]);
        await client.query(logChangeSql, [id]);
        return recordFromRow(row);
      }),

    rotation: async (tenantId) => {
      const [row] = await query<RotationRow>(`SELECT ${ROTATION_COLUMNS} FROM ${rotations} WHERE tenant_id = $1`, [tenantId]);
      return row ? rotationFromRow(row) : null;
    },

    beginRotation: (tenantId, oldEndpointId, at, owner) =>
      transaction(async (client) => {
        const [inserted] = (
          await client.query<RotationRow>(
            `INSERT INTO ${rotations} (tenant_id, kind, step, old_endpoint_id, new_endpoint_id, owner_token, owner_host, owner_pid, lease_until, started_at, updated_at)
             VALUES ($1, 'secret', 'registering', $2, NULL, $3, $4, $5, $6, $7, $7)
             ON CONFLICT (tenant_id) DO NOTHING RETURNING ${ROTATION_COLUMNS}`,
            [tenantId, oldEndpointId, owner.token, owner.host, owner.pid, owner.leaseUntil, at],
          )
        ).rows;
        // One is under way (ON CONFLICT DO NOTHING returns no row): the caller reads who owns it.
        if (!inserted) return (await rotationOf(client, tenantId))!;
        // Receivers hold what no secret verifies from now on: the new endpoint may deliver before its secret is stored.
        if ((await client.query(`UPDATE ${tenants} SET rotating_since = $2 WHERE id = $1`, [tenantId, at])).rowCount) await client.query(logChangeSql, [tenantId]);
        return rotationFromRow(inserted);
      }),

    claimRotation: (tenantId, claim) =>
      transaction(async (client) => {
        const rotation = await rotationOf(client, tenantId, 'FOR UPDATE');
        if (rotation === null || !mayTake(rotation.owner, claim)) return rotation;
        await setOwner(client, tenantId, claim.owner);
        return rotationOf(client, tenantId);
      }),

    renewRotation: async (tenantId, token, leaseUntil) => (await changes(`UPDATE ${rotations} SET lease_until = $3 WHERE tenant_id = $1 AND owner_token = $2`, [tenantId, token, leaseUntil])) > 0,

    releaseRotation: async (tenantId, token) => {
      await changes(`UPDATE ${rotations} SET owner_token = NULL, owner_host = NULL, owner_pid = NULL, lease_until = NULL WHERE tenant_id = $1 AND owner_token = $2`, [tenantId, token]);
    },

    advanceRotation: async (tenantId, step, newEndpointId, at, token) => {
      const [row] = await query<RotationRow>(
        `UPDATE ${rotations} SET step = $2, new_endpoint_id = $3, updated_at = $4 WHERE tenant_id = $1 AND owner_token = $5 RETURNING ${ROTATION_COLUMNS}`,
        [tenantId, step, newEndpointId, at, token],
      );
      return row ? rotationFromRow(row) : null;
    },

    finishRotation: (tenantId, token) =>
      transaction(async (client) => {
        if (!(await client.query(`DELETE FROM ${rotations} WHERE tenant_id = $1 AND owner_token = $2`, [tenantId, token])).rowCount) return false;
        if ((await client.query(`UPDATE ${tenants} SET rotating_since = NULL WHERE id = $1 AND rotating_since IS NOT NULL`, [tenantId])).rowCount) await client.query(logChangeSql, [tenantId]);
        return true;
      }),

    sealedValues: async (after, limit) => {
      const [tenantId, endpointId] = sealedCursor(after);
      const rows = await query<SealedRow>(
        `SELECT tenant_id, endpoint_id, sealed FROM (
           SELECT id AS tenant_id, '' AS endpoint_id, api_key AS sealed FROM ${tenants} WHERE api_key IS NOT NULL
           UNION ALL SELECT tenant_id, $4::text AS endpoint_id, retiring_key AS sealed FROM ${rotations} WHERE retiring_key IS NOT NULL
           UNION ALL SELECT tenant_id, endpoint_id, secret AS sealed FROM ${secrets}
         ) AS v WHERE (tenant_id COLLATE "C", endpoint_id COLLATE "C") > ($1 COLLATE "C", $2 COLLATE "C")
         ORDER BY tenant_id COLLATE "C", endpoint_id COLLATE "C" LIMIT $3`,
        [tenantId, endpointId, limit, RETIRING_PLACE],
      );
      return rows.map(sealedFromRow);
    },

    reseal: async (ref, next) =>
      (ref.retiring
        ? await changes(`UPDATE ${rotations} SET retiring_key = $1 WHERE tenant_id = $2 AND retiring_key = $3`, [next, ref.tenantId, ref.sealed])
        : ref.endpointId === null
        ? await changes(`UPDATE ${tenants} SET api_key = $1 WHERE id = $2 AND api_key = $3`, [next, ref.tenantId, ref.sealed])
        : await changes(`UPDATE ${secrets} SET secret = $1 WHERE tenant_id = $2 AND endpoint_id = $3 AND secret = $4`, [next, ref.tenantId, ref.endpointId, ref.sealed])) > 0,

    readMeta: async (name) => (await query<{ value: string }>(`SELECT value FROM ${meta} WHERE name = $1`, [name]))[0]?.value ?? null,

    writeMeta: async (name, value) => {
      await changes(`INSERT INTO ${meta} (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`, [name, value]);
    },

    close: () => db.close(),
  } satisfies TenantStore as TenantStore;
}

export type { TenantStore };
