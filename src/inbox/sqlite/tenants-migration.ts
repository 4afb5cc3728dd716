/**
 * Many merchants (issue 28): entries are keyed by (delivery id, tenant), orders and what they have
 * had by (tenant, order id). SQLite cannot change a table's keys in place, so a database an earlier
 * version wrote is rebuilt once, in one transaction, into tables of that shape, its rows under the
 * tenant `''`: a single-merchant inbox keeps working unchanged.
 */
import { addSqliteColumn, sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';

const ENTRIES = `(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant TEXT NOT NULL DEFAULT '',
  delivery_id TEXT NOT NULL,
  event TEXT NOT NULL,
  order_id TEXT,
  ts INTEGER NOT NULL,
  payload TEXT,
  known INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  received_at INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  finished_at INTEGER,
  schema_issues TEXT,
  display_number TEXT,
  external_order_id TEXT,
  verified_by TEXT,
  pair_key TEXT,
  copy_of TEXT,
  copied_by TEXT,
  UNIQUE (delivery_id, tenant)
)`;

const ORDERS = `(
  tenant TEXT NOT NULL DEFAULT '',
  order_id TEXT NOT NULL,
  status TEXT,
  status_ts INTEGER NOT NULL DEFAULT 0,
  status_at INTEGER NOT NULL DEFAULT 0,
  last_event_at INTEGER NOT NULL,
  checked_at INTEGER,
  has_created INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 0,
  created_cover INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, order_id)
)`;

const STATUSES = `(
  tenant TEXT NOT NULL DEFAULT '',
  order_id TEXT NOT NULL,
  status TEXT NOT NULL,
  seen_version INTEGER,
  entered_from TEXT,
  left_version INTEGER,
  cover_version INTEGER,
  PRIMARY KEY (tenant, order_id, status)
)`;

/**
 * What the tenants' claims and reads walk: each tenant's due entries in order (the fair claim), and
 * each tenant's entries by status (its counts and lists), the latter only for entries of a tenant,
 * so that a single-merchant inbox's inserts pay for one index more, not two.
 */
export const TENANT_INDEXES = `
CREATE INDEX IF NOT EXISTS inbox_entries_tenant_due ON inbox_entries (tenant, next_attempt_at, seq) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS inbox_entries_tenant_status ON inbox_entries (tenant, status, received_at, delivery_id) WHERE tenant <> '';
CREATE TABLE IF NOT EXISTS inbox_reconcile_tenants (tenant TEXT PRIMARY KEY, ran_at INTEGER NOT NULL, missed TEXT NOT NULL, endpoint_ids TEXT);
`;

const columnsOf = (database: Database, table: string) => (database.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name);

/** Copies `table` into a new table of `shape` (every column it has) and puts the new one in its place. */
function rebuild(database: Database, table: string, shape: string): void {
  const columns = columnsOf(database, table).join(', ');
  database.exec(`DROP TABLE IF EXISTS ${table}_next`);
  database.exec(`CREATE TABLE ${table}_next ${shape}`);
  database.exec(`INSERT INTO ${table}_next (${columns}) SELECT ${columns} FROM ${table}`);
  database.exec(`DROP TABLE ${table}`);
  database.exec(`ALTER TABLE ${table}_next RENAME TO ${table}`);
}

const SHAPES: ReadonlyArray<[table: string, shape: string]> = [
  ['inbox_entries', ENTRIES],
  ['inbox_orders', ORDERS],
  ['inbox_order_statuses', STATUSES],
];

/**
 * Rebuilds each table an earlier version wrote (once: it then has a `tenant` column). Their
 * indexes go with the old tables: the caller creates them again after this.
 */
export function migrateTenants(database: Database): void {
  const old = SHAPES.filter(([table]) => !columnsOf(database, table).includes('tenant'));
  if (old.length === 0 && columnsOf(database, 'inbox_missed').includes('tenant')) return;
  sqliteTransaction(database, () => {
    for (const [table, shape] of old) rebuild(database, table, shape);
    addSqliteColumn(database, 'inbox_missed', 'tenant', "TEXT NOT NULL DEFAULT ''");
  });
}
