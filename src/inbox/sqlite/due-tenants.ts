/**
 * The tenants with due work, for the fair claim (./claim.ts): one row per tenant, `due_at` no later
 * than the earliest `next_attempt_at` of its pending entries (NULL: none pending). Triggers on the
 * entries table lower it in the transaction that stores a pending entry or makes one pending again
 * (a failed run waiting for its retry, `retry`, `retryDead`), whichever code writes it; a claim
 * raises it to the tenant's real earliest time when the tenant has nothing due any more. So a
 * claim finds the tenants with something due through the `(due_at, tenant)` index, and never looks
 * at a tenant whose entries all wait for a retry, however many there are.
 */
import { sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';

// Lowers the tenant's due time to the entry's, in the same statement's transaction. An upsert that
// changes nothing when the tenant is due already: a receiver's insert reads one row, writes none.
const lower = `INSERT INTO inbox_due_tenants (tenant, due_at) VALUES (NEW.tenant, NEW.next_attempt_at)
    ON CONFLICT (tenant) DO UPDATE SET due_at = excluded.due_at
    WHERE inbox_due_tenants.due_at IS NULL OR inbox_due_tenants.due_at > excluded.due_at;`;

const TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS inbox_entries_due_insert AFTER INSERT ON inbox_entries
  WHEN NEW.status = 'pending'
  BEGIN ${lower} END;
CREATE TRIGGER IF NOT EXISTS inbox_entries_due_update AFTER UPDATE OF status, next_attempt_at ON inbox_entries
  WHEN NEW.status = 'pending' AND (OLD.status <> 'pending' OR NEW.next_attempt_at < OLD.next_attempt_at)
  BEGIN ${lower} END;
`;

/**
 * Creates the table and its triggers; a database an earlier version wrote gets each tenant's due
 * time from its pending entries, in the same transaction. The triggers are made again each time:
 * rebuilding the entries table (./tenants-migration.ts) drops them with it.
 */
export function migrateDueTenants(database: Database): void {
  const exists = database.prepare(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'inbox_due_tenants'`).get();
  if (exists) {
    database.exec(TRIGGERS);
    return;
  }
  sqliteTransaction(database, () => {
    database.exec(`
      CREATE TABLE IF NOT EXISTS inbox_due_tenants (tenant TEXT PRIMARY KEY, due_at INTEGER);
      CREATE INDEX IF NOT EXISTS inbox_due_tenants_due ON inbox_due_tenants (due_at, tenant) WHERE due_at IS NOT NULL;
      ${TRIGGERS}
      INSERT INTO inbox_due_tenants (tenant, due_at)
        SELECT tenant, MIN(next_attempt_at) FROM inbox_entries WHERE status = 'pending' GROUP BY tenant;
    `);
  });
}

/**
 * Tenants with something due at `:now`, in tenant order, at most `:limit`: from the first; after
 * `:after`; up to `:upTo`. Through the due index, so that only tenants with something due are read
 * (in key order, every waiting tenant after `:after` would be: 0.9 ms against 0.26 ms a claim with
 * 10,000 waiting; with 10,000 due, sorting them costs 1.8 ms).
 */
export const DUE_FROM_FIRST = `SELECT tenant FROM inbox_due_tenants INDEXED BY inbox_due_tenants_due WHERE due_at <= :now ORDER BY tenant LIMIT :limit`;
export const DUE_AFTER = `SELECT tenant FROM inbox_due_tenants INDEXED BY inbox_due_tenants_due WHERE due_at <= :now AND tenant > :after ORDER BY tenant LIMIT :limit`;
export const DUE_UP_TO = `SELECT tenant FROM inbox_due_tenants INDEXED BY inbox_due_tenants_due WHERE due_at <= :now AND tenant <= :upTo ORDER BY tenant LIMIT :limit`;

// The tenant's earliest pending entry, one seek in its index (named: the planner would otherwise
// take the (status, ...) index and read every pending entry of every tenant).
const EARLIEST = `SELECT MIN(next_attempt_at) AS at FROM inbox_entries INDEXED BY inbox_entries_tenant_due WHERE tenant = ? AND status = 'pending'`;
// Raised only when nothing is due any more: a tenant with due work left stays as it is, unwritten.
const RAISE = `UPDATE inbox_due_tenants SET due_at = :at WHERE tenant = :tenant AND (:at IS NULL OR :at > :now) AND due_at IS NOT :at`;

/**
 * After a claim (in its transaction): each tenant it looked at that has nothing due any more gets
 * its real earliest time (NULL when nothing is pending), so that later claims pass it by until then.
 */
export function refreshDueTenants(database: Database, tenants: readonly string[], now: number): void {
  const earliest = database.prepare(EARLIEST);
  const raise = database.prepare(RAISE);
  for (const tenant of tenants) {
    const { at } = earliest.get(tenant) as { at: number | null };
    raise.run({ tenant, at, now });
  }
}
