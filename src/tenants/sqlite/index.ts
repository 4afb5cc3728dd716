/**
 * `integration-sdk/tenants/sqlite`: the tenants registry on a SQLite file (`node:sqlite`, no
 * dependency), in WAL mode. Its tables are prefixed `tenants`, so the inbox's and the sync's file can hold them
 * too. Every process on the machine sharing the file sees a tenant turn `key_invalid` at its next
 * request. Credentials arrive sealed: nothing in the file is a key or a secret in clear.
 */
import { addSqliteColumn, openSqliteFile, sqliteTransaction, type SqliteDatabase } from '../../storage/sqlite.ts';
import { planConnect } from '../connect-plan.ts';
import { SECRET_CHANGES_KEPT, type ConnectIntent, type ConnectIntentResult, type TenantRecord, type TenantRotationOwner, type TenantRotationRecord, type TenantStatus, type TenantStore } from '../store.ts';
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

/** Options of {@link sqliteTenantStore}. */
export interface SqliteTenantStoreOptions {
  /** The database file; created with its tables when missing. May be the inbox's or the sync's file. */
  path: string;
  /**
   * How long one operation keeps retrying while another connection holds the write lock, in ms.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenants (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL,
  store_ids TEXT NOT NULL,
  scopes TEXT NOT NULL,
  status TEXT NOT NULL,
  api_key TEXT,
  key_generation INTEGER NOT NULL DEFAULT 1,
  endpoint_id TEXT,
  allow_same_merchant INTEGER NOT NULL DEFAULT 0,
  connected_at INTEGER,
  key_invalid_at INTEGER,
  disconnected_at INTEGER,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tenants_merchant ON tenants (merchant_id);
CREATE INDEX IF NOT EXISTS tenants_status ON tenants (status, id);
CREATE TABLE IF NOT EXISTS tenants_secrets (
  tenant_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, endpoint_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tenants_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tenants_rotations (
  tenant_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT 'secret',
  step TEXT NOT NULL,
  old_endpoint_id TEXT NOT NULL,
  new_endpoint_id TEXT,
  retiring_key TEXT,
  owner_token TEXT,
  owner_host TEXT,
  owner_pid INTEGER,
  lease_until INTEGER,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tenants_secret_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL);
`;

/**
 * Numbers a change of what receivers accept for the tenant (see TenantStore.secretChanges), in the
 * caller's transaction, and forgets the ones older than the latest SECRET_CHANGES_KEPT.
 */
function logChange(db: SqliteDatabase, tenantId: string): void {
  const { seq } = db.prepare('INSERT INTO tenants_secret_changes (tenant_id) VALUES (?) RETURNING seq').get(tenantId) as { seq: number };
  if (seq % 100 === 0) db.prepare('DELETE FROM tenants_secret_changes WHERE seq <= ?').run(seq - SECRET_CHANGES_KEPT);
}

function getRow(db: SqliteDatabase, id: string): TenantRecord | null {
  const row = db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`).get(id) as TenantRow | undefined;
  return row ? recordFromRow(row) : null;
}

function getRotation(db: SqliteDatabase, tenantId: string): TenantRotationRecord | null {
  const row = db.prepare(`SELECT ${ROTATION_COLUMNS} FROM tenants_rotations WHERE tenant_id = ?`).get(tenantId) as RotationRow | undefined;
  return row ? rotationFromRow(row) : null;
}

function setOwner(db: SqliteDatabase, tenantId: string, owner: TenantRotationOwner | null): void {
  db.prepare('UPDATE tenants_rotations SET owner_token = ?, owner_host = ?, owner_pid = ?, lease_until = ? WHERE tenant_id = ?').run(
    owner?.token ?? null,
    owner?.host ?? null,
    owner?.pid ?? null,
    owner?.leaseUntil ?? null,
    tenantId,
  );
}

function beginConnect(db: SqliteDatabase, intent: ConnectIntent): ConnectIntentResult {
  const current = getRow(db, intent.id);
  const rotation = getRotation(db, intent.id);
  const other = db
    .prepare("SELECT id FROM tenants WHERE merchant_id = ? AND id <> ? AND status <> 'disconnected' ORDER BY id LIMIT 1")
    .get(intent.merchantId, intent.id) as { id: string } | undefined;
  const plan = planConnect(intent, current, rotation, other?.id ?? null);
  if (plan.outcome === 'key_change_pending') {
    setOwner(db, intent.id, intent.owner);
    return { outcome: 'key_change_pending', record: current!, rotation: getRotation(db, intent.id)! };
  }
  if (plan.outcome !== 'write') return plan;
  const { status } = plan;
  db.prepare(
    `INSERT INTO tenants (id, merchant_id, store_ids, scopes, status, api_key, key_generation, allow_same_merchant, connected_at, key_invalid_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET merchant_id = excluded.merchant_id, store_ids = excluded.store_ids, scopes = excluded.scopes,
       status = excluded.status, api_key = excluded.api_key, key_generation = excluded.key_generation,
       allow_same_merchant = excluded.allow_same_merchant, disconnected_at = NULL, updated_at = excluded.updated_at,
       connected_at = excluded.connected_at, key_invalid_at = excluded.key_invalid_at`,
  ).run(
    intent.id,
    intent.merchantId,
    JSON.stringify(intent.storeIds),
    JSON.stringify(intent.scopes),
    status,
    intent.apiKey,
    plan.keyGeneration,
    intent.allowSameMerchant ? 1 : 0,
    plan.connectedAt,
    plan.keyInvalidAt,
    intent.at,
  );
  let changedWhatReceiversAccept = current?.status !== status;
  if (plan.rotation.action === 'begin') {
    const { oldEndpointId, retiringKey } = plan.rotation.change;
    db.prepare(
      `INSERT OR REPLACE INTO tenants_rotations (tenant_id, kind, step, old_endpoint_id, new_endpoint_id, retiring_key, started_at, updated_at)
       VALUES (?, 'key', 'registering', ?, NULL, ?, ?, ?)`,
    ).run(intent.id, oldEndpointId, retiringKey, intent.at, intent.at);
    setOwner(db, intent.id, intent.owner);
    // Receivers hold what no secret verifies from now on: the new key's endpoint may deliver before its secret is stored.
    db.prepare('UPDATE tenants SET rotating_since = ? WHERE id = ?').run(intent.at, intent.id);
    changedWhatReceiversAccept = true;
  } else if (plan.rotation.action === 'claim') {
    setOwner(db, intent.id, intent.owner);
  }
  if (changedWhatReceiversAccept) logChange(db, intent.id);
  const owned = plan.rotation.action === 'none' ? null : getRotation(db, intent.id);
  return { outcome: 'ok', record: getRow(db, intent.id)!, rotation: owned };
}

/**
 * The tenants registry on a SQLite file.
 *
 * @example
 * ```ts
 * import { createTenants } from 'integration-sdk/tenants';
 * import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
 *
 * const tenants = createTenants({
 *   store: sqliteTenantStore({ path: './integration.db' }),
 *   encryptionKey: process.env.TENANTS_KEY!,
 *   baseUrl: 'https://platform.example.com',
 *   webhookUrl: (id) => `https://erp.example.com/webhooks/integration/${id}`,
 * });
 * ```
 */
export function sqliteTenantStore(options: SqliteTenantStoreOptions): TenantStore {
  const file = openSqliteFile({ path: options?.path, busyTimeoutMs: options?.busyTimeoutMs, owner: 'sqliteTenantStore', alternative: 'postgresTenantStore' });

  let migrated = false;
  async function migrate(): Promise<void> {
    if (migrated) return;
    await file.attempt((database) => {
      database.exec('PRAGMA journal_mode = WAL');
      // WAL with synchronous=NORMAL: a committed change survives a killed process; a power cut may
      // lose the last ones, which a second connect or disconnect repairs like any interrupted one.
      database.exec('PRAGMA synchronous = NORMAL');
      database.exec(SCHEMA);
      // Added for receivers (issue 28): a rotation in progress, and the first verification of each secret.
      addSqliteColumn(database, 'tenants', 'rotating_since', 'INTEGER');
      addSqliteColumn(database, 'tenants_secrets', 'verified_at', 'INTEGER');
      // Added by the review fixes: a rotation for a new key (its old key kept sealed), and its owner's lease.
      addSqliteColumn(database, 'tenants_rotations', 'kind', "TEXT NOT NULL DEFAULT 'secret'");
      for (const [column, type] of [['retiring_key', 'TEXT'], ['owner_token', 'TEXT'], ['owner_host', 'TEXT'], ['owner_pid', 'INTEGER'], ['lease_until', 'INTEGER']] as const) {
        addSqliteColumn(database, 'tenants_rotations', column, type);
      }
    });
    migrated = true;
  }
  async function run<T>(operation: (db: SqliteDatabase) => T): Promise<T> {
    await migrate();
    return file.attempt(operation);
  }
  const write = <T>(operation: (db: SqliteDatabase) => T) => run((database) => sqliteTransaction(database, () => operation(database)));
  const changed = (result: { changes: number | bigint }) => Number(result.changes) > 0;

  return {
    migrate,

    get: (id) => run((db) => getRow(db, id)),

    list: ({ statuses, after, limit }) =>
      run((db) => {
        const rows = statuses
          ? db
              .prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE status IN (SELECT value FROM json_each(?)) AND id > ? ORDER BY id LIMIT ?`)
              .all(JSON.stringify(statuses), after ?? '', limit)
          : db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id > ? ORDER BY id LIMIT ?`).all(after ?? '', limit);
        return (rows as TenantRow[]).map(recordFromRow);
      }),

    countByStatus: () =>
      run((db) => {
        const rows = db.prepare('SELECT status, count(*) AS n FROM tenants GROUP BY status').all() as { status: TenantStatus; n: number }[];
        return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
      }),

    beginConnect: (intent) => write((db) => beginConnect(db, intent)),

    finishConnect: (id, endpointId, at) =>
      write((db) => {
        const done = db
          .prepare(
            `UPDATE tenants SET status = 'active', endpoint_id = ?, connected_at = coalesce(connected_at, ?), key_invalid_at = NULL, updated_at = ?
             WHERE id = ? AND status IN ('connecting', 'active', 'key_invalid')`,
          )
          .run(endpointId, at, at, id);
        if (!changed(done)) return null;
        logChange(db, id);
        return getRow(db, id);
      }),

    putSecret: async ({ tenantId, endpointId, secret, createdAt }) => {
      await write((db) => {
        db.prepare('INSERT OR REPLACE INTO tenants_secrets (tenant_id, endpoint_id, secret, created_at) VALUES (?, ?, ?, ?)').run(tenantId, endpointId, secret, createdAt);
        logChange(db, tenantId);
      });
    },

    deleteSecret: async (tenantId, endpointId) => {
      await write((db) => {
        if (changed(db.prepare('DELETE FROM tenants_secrets WHERE tenant_id = ? AND endpoint_id = ?').run(tenantId, endpointId))) logChange(db, tenantId);
      });
    },

    secrets: (tenantId) =>
      run((db) =>
        (db.prepare(`SELECT ${SECRET_COLUMNS} FROM tenants_secrets WHERE tenant_id = ? ORDER BY created_at DESC, endpoint_id`).all(tenantId) as SecretRow[]).map(secretFromRow),
      ),

    markSecretVerified: (tenantId, endpointId, at) =>
      run((db) => changed(db.prepare('UPDATE tenants_secrets SET verified_at = ? WHERE tenant_id = ? AND endpoint_id = ? AND verified_at IS NULL').run(at, tenantId, endpointId))),

    setRotating: (tenantId, since) =>
      write((db) => {
        if (!changed(db.prepare('UPDATE tenants SET rotating_since = ? WHERE id = ?').run(since, tenantId))) return false;
        logChange(db, tenantId);
        return true;
      }),

    secretChanges: (after, limit) =>
      run((db) => {
        const rows = db.prepare('SELECT seq, tenant_id FROM tenants_secret_changes WHERE seq > ? ORDER BY seq LIMIT ?').all(after, limit) as { seq: number; tenant_id: string }[];
        const latest = db.prepare('SELECT max(seq) AS latest FROM tenants_secret_changes').get() as { latest: number | null };
        return { changes: rows.map((row) => ({ seq: Number(row.seq), tenantId: row.tenant_id })), latest: Number(latest.latest ?? 0) };
      }),

    markKeyInvalid: (id, keyGeneration, at) =>
      write((db) => {
        const done = db
          .prepare("UPDATE tenants SET status = 'key_invalid', key_invalid_at = ?, updated_at = ? WHERE id = ? AND key_generation = ? AND status IN ('active', 'connecting')")
          .run(at, at, id, keyGeneration);
        if (!changed(done)) return false;
        logChange(db, id);
        return true;
      }),

    beginDisconnect: (id, at) =>
      write((db) => {
        const done = db.prepare("UPDATE tenants SET status = 'disconnecting', updated_at = ? WHERE id = ? AND status <> 'disconnected'").run(at, id);
        if (!changed(done)) return null;
        logChange(db, id);
        return getRow(db, id);
      }),

    finishDisconnect: (id, at) =>
      write((db) => {
        const done = db
          .prepare("UPDATE tenants SET status = 'disconnected', api_key = NULL, endpoint_id = NULL, disconnected_at = ?, updated_at = ? WHERE id = ? AND status = 'disconnecting'")
          .run(at, at, id);
        if (!changed(done)) return null;
        db.prepare('DELETE FROM tenants_secrets WHERE tenant_id = ?').run(id);
        db.prepare('DELETE FROM tenants_rotations WHERE tenant_id = ?').run(id);
        logChange(db, id);
        return getRow(db, id);
      }),

    rotation: (tenantId) => run((db) => getRotation(db, tenantId)),

    beginRotation: (tenantId, oldEndpointId, at, owner) =>
      write((db) => {
        const begun = db
          .prepare(
            `INSERT INTO tenants_rotations (tenant_id, kind, step, old_endpoint_id, new_endpoint_id, owner_token, owner_host, owner_pid, lease_until, started_at, updated_at)
             VALUES (?, 'secret', 'registering', ?, NULL, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (tenant_id) DO NOTHING`,
          )
          .run(tenantId, oldEndpointId, owner.token, owner.host, owner.pid, owner.leaseUntil, at, at);
        // Receivers hold what no secret verifies from now on: the new endpoint may deliver before its secret is stored.
        if (changed(begun) && changed(db.prepare('UPDATE tenants SET rotating_since = ? WHERE id = ?').run(at, tenantId))) logChange(db, tenantId);
        return getRotation(db, tenantId)!;
      }),

    claimRotation: (tenantId, claim) =>
      write((db) => {
        const rotation = getRotation(db, tenantId);
        if (rotation === null) return null;
        if (!mayTake(rotation.owner, claim)) return rotation;
        setOwner(db, tenantId, claim.owner);
        return getRotation(db, tenantId);
      }),

    renewRotation: (tenantId, token, leaseUntil) =>
      run((db) => changed(db.prepare('UPDATE tenants_rotations SET lease_until = ? WHERE tenant_id = ? AND owner_token = ?').run(leaseUntil, tenantId, token))),

    releaseRotation: async (tenantId, token) => {
      await run((db) =>
        db.prepare('UPDATE tenants_rotations SET owner_token = NULL, owner_host = NULL, owner_pid = NULL, lease_until = NULL WHERE tenant_id = ? AND owner_token = ?').run(tenantId, token),
      );
    },

    advanceRotation: (tenantId, step, newEndpointId, at, token) =>
      write((db) => {
        const done = db.prepare('UPDATE tenants_rotations SET step = ?, new_endpoint_id = ?, updated_at = ? WHERE tenant_id = ? AND owner_token = ?').run(step, newEndpointId, at, tenantId, token);
        return changed(done) ? getRotation(db, tenantId) : null;
      }),

    finishRotation: (tenantId, token) =>
      write((db) => {
        if (!changed(db.prepare('DELETE FROM tenants_rotations WHERE tenant_id = ? AND owner_token = ?').run(tenantId, token))) return false;
        if (changed(db.prepare('UPDATE tenants SET rotating_since = NULL WHERE id = ? AND rotating_since IS NOT NULL').run(tenantId))) logChange(db, tenantId);
        return true;
      }),

    sealedValues: (after, limit) =>
      run((db) => {
        const [tenantId, endpointId] = sealedCursor(after);
        const rows = db
          .prepare(
            `SELECT tenant_id, endpoint_id, sealed FROM (
               SELECT id AS tenant_id, '' AS endpoint_id, api_key AS sealed FROM tenants WHERE api_key IS NOT NULL
               UNION ALL SELECT tenant_id, ? AS endpoint_id, retiring_key AS sealed FROM tenants_rotations WHERE retiring_key IS NOT NULL
               UNION ALL SELECT tenant_id, endpoint_id, secret AS sealed FROM tenants_secrets
             ) WHERE (tenant_id, endpoint_id) > (?, ?) ORDER BY tenant_id, endpoint_id LIMIT ?`,
          )
          .all(RETIRING_PLACE, tenantId, endpointId, limit) as SealedRow[];
        return rows.map(sealedFromRow);
      }),

    reseal: (ref, next) =>
      write((db) =>
        changed(
          ref.retiring
            ? db.prepare('UPDATE tenants_rotations SET retiring_key = ? WHERE tenant_id = ? AND retiring_key = ?').run(next, ref.tenantId, ref.sealed)
            : ref.endpointId === null
            ? db.prepare('UPDATE tenants SET api_key = ? WHERE id = ? AND api_key = ?').run(next, ref.tenantId, ref.sealed)
            : db.prepare('UPDATE tenants_secrets SET secret = ? WHERE tenant_id = ? AND endpoint_id = ? AND secret = ?').run(next, ref.tenantId, ref.endpointId, ref.sealed),
        ),
      ),

    readMeta: (name) => run((db) => (db.prepare('SELECT value FROM tenants_meta WHERE name = ?').get(name) as { value: string } | undefined)?.value ?? null),

    writeMeta: async (name, value) => {
      await write((db) => {
        db.prepare('INSERT OR REPLACE INTO tenants_meta (name, value) VALUES (?, ?)').run(name, value);
      });
    },

    async close() {
      file.close();
    },
  } satisfies TenantStore as TenantStore;
}

export type { TenantStore, TenantRecord, TenantStatus };
