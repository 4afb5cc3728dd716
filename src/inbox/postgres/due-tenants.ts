/**
 * The tenants with due work, for the fair claim (./claim.ts), on Postgres: one row per tenant,
 * `due_at` no later than the earliest `next_attempt_at` of its pending entries (NULL: none
 * pending). A trigger on the entries table lowers it in the transaction that stores a pending entry
 * or makes one pending again (a failed run waiting for its retry, `retry`, `retryDead`), whichever
 * code writes it; after a claim, {@link refreshDueTenants} raises it to the tenant's real earliest
 * time when the tenant has nothing due any more. So a claim finds the tenants with something due
 * through the `(due_at, tenant)` index, and never looks at a tenant whose entries all wait for a
 * retry, however many there are.
 *
 * Raising must not pass over an entry made pending at the same time by a transaction it cannot see
 * yet. So every writer that makes an entry pending holds a shared advisory lock on its tenant until
 * it commits (shared: receivers of one tenant never wait for each other), and reads the tenant's
 * row only once it holds it; a raise takes the same lock exclusively, without waiting (a tenant
 * being written to is simply raised at a later claim), and reads the tenant's earliest entry in a
 * statement begun after it got the lock (READ COMMITTED: it sees every writer that held it).
 * A receiver's insert into a tenant that is due already reads one row and writes none.
 */
import type { PoolClient } from 'pg';

/** The table and functions of a schema, qualified and quoted. */
export interface DueTenantsNames {
  schema: string;
  entries: string;
}

const dueTable = (schema: string) => `"${schema}".inbox_due_tenants`;
// The two-key advisory lock space (separate from the order locks' one-key space): the schema's, the tenant's.
const lockKeys = (schema: string, tenant: string) => `hashtext('${schema}:inbox_due'), hashtext(${tenant})`;

/**
 * Creates the table, the trigger that lowers a tenant's due time, and the function that raises it;
 * a database an earlier version wrote gets each tenant's due time from its pending entries, in the
 * same transaction (the migration's, which the trigger's creation makes wait for writers in flight).
 */
export async function migrateDueTenants(client: PoolClient, { schema, entries }: DueTenantsNames): Promise<void> {
  const due = dueTable(schema);
  const [existing] = (await client.query<{ found: string | null }>(`SELECT to_regclass($1) AS found`, [due])).rows;
  await client.query(`CREATE TABLE IF NOT EXISTS ${due} (tenant TEXT PRIMARY KEY, due_at BIGINT)`);
  await client.query(`CREATE INDEX IF NOT EXISTS inbox_due_tenants_due ON ${due} (due_at, tenant) WHERE due_at IS NOT NULL`);
  await client.query(`
    CREATE OR REPLACE FUNCTION "${schema}".inbox_due_lower() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(${lockKeys(schema, 'NEW.tenant')});
      IF NOT EXISTS (SELECT 1 FROM ${due} WHERE tenant = NEW.tenant AND due_at <= NEW.next_attempt_at) THEN
        INSERT INTO ${due} AS d (tenant, due_at) VALUES (NEW.tenant, NEW.next_attempt_at)
          ON CONFLICT (tenant) DO UPDATE SET due_at = EXCLUDED.due_at WHERE d.due_at IS NULL OR d.due_at > EXCLUDED.due_at;
      END IF;
      RETURN NULL;
    END
    $fn$`);
  await client.query(`
    CREATE OR REPLACE FUNCTION "${schema}".inbox_due_refresh(tenants text[], at_time bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE
      t text;
      earliest bigint;
    BEGIN
      FOREACH t IN ARRAY tenants LOOP
        IF pg_try_advisory_xact_lock(${lockKeys(schema, 't')}) THEN
          SELECT min(next_attempt_at) INTO earliest FROM ${entries} WHERE status = 'pending' AND tenant = t;
          IF earliest IS NULL OR earliest > at_time THEN
            UPDATE ${due} SET due_at = earliest WHERE tenant = t AND due_at IS DISTINCT FROM earliest;
          END IF;
        END IF;
      END LOOP;
    END
    $fn$`);
  // Created once: CREATE TRIGGER locks the table against every writer while it runs.
  const { rows } = await client.query<{ tgname: string }>(`SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname LIKE 'inbox_entries_due_%'`, [entries]);
  const made = new Set(rows.map((row) => row.tgname));
  const lower = `EXECUTE PROCEDURE "${schema}".inbox_due_lower()`;
  if (!made.has('inbox_entries_due_insert')) {
    await client.query(`CREATE TRIGGER inbox_entries_due_insert AFTER INSERT ON ${entries} FOR EACH ROW WHEN (NEW.status = 'pending') ${lower}`);
  }
  if (!made.has('inbox_entries_due_update')) {
    await client.query(`CREATE TRIGGER inbox_entries_due_update AFTER UPDATE OF status, next_attempt_at ON ${entries} FOR EACH ROW
      WHEN (NEW.status = 'pending' AND (OLD.status <> 'pending' OR NEW.next_attempt_at < OLD.next_attempt_at)) ${lower}`);
  }
  if (!existing?.found) {
    await client.query(`INSERT INTO ${due} (tenant, due_at) SELECT tenant, min(next_attempt_at) FROM ${entries} WHERE status = 'pending' GROUP BY tenant
      ON CONFLICT (tenant) DO UPDATE SET due_at = least(${due}.due_at, EXCLUDED.due_at)`);
  }
}

/**
 * Tenants with something due at `$1`, in the order of their turn, at most `$3`: after `$4`, then
 * round from the first up to it (which comes last); from the first when there is no `$4`. Each with
 * whether it has a runnable due entry (`runnable`: the claim's rule, for `e`, with `$1` now and `$2`
 * orderWaitMs).
 */
export function walkSql(schema: string, entries: string, runnable: string, fromFirst: boolean): string {
  const due = dueTable(schema);
  const turns = fromFirst
    ? `SELECT tenant, 1 AS part FROM ${due} WHERE due_at <= $1 ORDER BY tenant LIMIT $3`
    : `(SELECT tenant, 1 AS part FROM ${due} WHERE due_at <= $1 AND tenant > $4::text ORDER BY tenant LIMIT $3)
       UNION ALL
       (SELECT tenant, 2 AS part FROM ${due} WHERE due_at <= $1 AND tenant <= $4::text ORDER BY tenant LIMIT $3)
       ORDER BY part, tenant LIMIT $3`;
  return `SELECT w.tenant, EXISTS (SELECT 1 FROM ${entries} e WHERE e.status = 'pending' AND e.tenant = w.tenant AND e.next_attempt_at <= $1 AND ${runnable}) AS runnable
    FROM (${turns}) w ORDER BY w.part, w.tenant`;
}

/** After a claim: the tenants it looked at that have nothing due any more get their real earliest time. */
export async function refreshDueTenants(query: <R>(sql: string, params?: unknown[]) => Promise<R[]>, schema: string, tenants: readonly string[], now: number): Promise<void> {
  if (tenants.length > 0) await query(`SELECT "${schema}".inbox_due_refresh($1::text[], $2::bigint)`, [tenants, now]);
}
