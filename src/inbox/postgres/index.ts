/**
 * `integration-sdk/inbox/postgres`: the inbox store on Postgres, for receivers and workers on
 * several machines. Needs `pg` ≥ 8 (an optional peer dependency, loaded only by this entry).
 * Claims with `FOR UPDATE SKIP LOCKED`; new entries wake workers with `LISTEN/NOTIFY`, and workers
 * also poll, so that it works through PgBouncer in transaction mode (where LISTEN does not).
 */
import type { PoolClient } from 'pg';
import { checkPostgresOptions, postgresPool, type PostgresConnectionOptions } from '../../storage/postgres.ts';
import { migrateMissed, postgresMissedMethods } from './missed.ts';
import { migrateOrderHistory, migrateOrderTenants, recordReadStatus, storedOrderEvents } from './order-history.ts';
import { activityOf, backfillOrderStates, decodedRow, fromText, toText, entryFromRow, entryWithPayloadFromRow, INBOX_COLUMNS, NEW_ENTRY_COLUMNS, newEntryValues, orderReferences, orderStateFromRow, orderStatusOf, pageQuery, statsOf, storedTenant, tracksOrder } from '../store.ts';
import { claimDue, claimExpired, inClaimOrder, turnsOf, walkDueTenants } from './claim.ts';
import { migrateDueTenants, refreshDueTenants } from './due-tenants.ts';
import { tenantParam, tenantWhere } from './tenant-filter.ts';
import type { InboxOrderRow, InboxRow, InboxStore, NewInboxEntry } from '../store.ts';
import { withPurgedActivity } from '../purged-activity.ts';
import { purgedActivityOf } from './purged-activity.ts';

/** Options of {@link postgresStore}: a connection string (or pool config), or an existing pool. */
export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** The schema holding the inbox's table, created by `migrate()`. @default 'integration_inbox' */
  schema?: string;
  /**
   * Whether workers hold one connection open with `LISTEN` to wake at once on new entries. Turn it
   * off behind PgBouncer in transaction mode: workers then find new entries by polling alone.
   * @default true
   */
  listen?: boolean;
}

type Row = InboxRow;
const COLUMNS = INBOX_COLUMNS;


const toEntry = (row: Row) => entryFromRow(decodedRow(row));
function postgresValues(entry: NewInboxEntry): unknown[] {
  const values: unknown[] = newEntryValues(entry);
  values[2] = toText(entry.orderId);
  values[4] = toText(entry.payload);
  values[5] = entry.known;
  return values;
}
const withPayload = (row: Row) => entryWithPayloadFromRow(decodedRow(row));
/** Enough of an entry for orderStatusOf to read a stored payload's status. */
const entryOf = (row: { order_id: string; event: string }): NewInboxEntry => ({ deliveryId: '', event: row.event, orderId: row.order_id, ts: 0, payload: '', known: true, receivedAt: 0 });

/**
 * The inbox store on Postgres.
 *
 * @example
 * ```ts
 * import { createInbox } from 'integration-sdk/inbox';
 * import { postgresStore } from 'integration-sdk/inbox/postgres';
 *
 * const store = postgresStore({ connectionString: process.env.DATABASE_URL, schema: 'integration_inbox' });
 * await store.migrate(); // or let the inbox create its table on first use
 * const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET!, store });
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): InboxStore {
  const schema = checkPostgresOptions('postgresStore', options, options?.schema ?? 'integration_inbox');
  const table = `"${schema}".inbox_entries`;
  const channel = `${schema}_inbox`;
  const db = postgresPool('postgresStore', options);
  const getPool = db.get;
  const query = db.query;
  const listeners = new Set<PoolClient>();
  const purged = purgedActivityOf(schema);

  const migrate = () =>
    db.migrateOnce(`integration-sdk-inbox:${schema}`, async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${table} (
          seq BIGSERIAL PRIMARY KEY,
          delivery_id TEXT NOT NULL,
          event TEXT NOT NULL,
          order_id TEXT,
          ts DOUBLE PRECISION NOT NULL,
          payload TEXT,
          known BOOLEAN NOT NULL,
          status TEXT NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          received_at BIGINT NOT NULL,
          next_attempt_at BIGINT NOT NULL,
          lease_owner TEXT,
          lease_until BIGINT,
          finished_at BIGINT,
          schema_issues TEXT,
          tenant TEXT NOT NULL DEFAULT '',
          verified_by TEXT,
          pair_key TEXT,
          pair_after BIGINT,
          copy_of TEXT,
          copied_by TEXT
        )`);
      // A table an earlier version made. Each change is made only when needed, and before any
      // CREATE INDEX: ALTER TABLE takes the table's strongest lock, and asking for it while holding
      // the share lock of an index build deadlocks with a worker that is claiming meanwhile.
      const [found] = (await client.query<{ ts_type: string; has_issues: boolean; has_tenant: boolean; has_btree_key: boolean }>(
        `SELECT
           (SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_entries' AND column_name = 'ts') AS ts_type,
           EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_entries' AND column_name = 'schema_issues') AS has_issues,
           EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_entries' AND column_name = 'tenant') AS has_tenant,
           EXISTS (SELECT 1 FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 AND c.conname = 'inbox_entries_delivery_id_key') AS has_btree_key`,
        [schema],
      )).rows;
      // 0.1: an integer ts refused 1700000000.25; no schema_issues; a btree unique key and order
      // index refused ids over ~2.7 KB.
      if (found && found.ts_type !== 'double precision') await client.query(`ALTER TABLE ${table} ALTER COLUMN ts TYPE DOUBLE PRECISION`);
      if (found && !found.has_issues) await client.query(`ALTER TABLE ${table} ADD COLUMN schema_issues TEXT`);
      if (found?.has_btree_key) await client.query(`ALTER TABLE ${table} DROP CONSTRAINT inbox_entries_delivery_id_key`);
      // Issue 28: entries of many merchants, each delivery kept with the secret that verified it
      // (its copies across two secrets paired at insert). An earlier table's rows are tenant ''.
      if (found && !found.has_tenant) {
        await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS tenant TEXT NOT NULL DEFAULT '', ADD COLUMN IF NOT EXISTS verified_by TEXT,
          ADD COLUMN IF NOT EXISTS pair_key TEXT, ADD COLUMN IF NOT EXISTS pair_after BIGINT, ADD COLUMN IF NOT EXISTS copy_of TEXT, ADD COLUMN IF NOT EXISTS copied_by TEXT`);
      }
      // The full indexes of earlier 0.1 builds, which every insert paid for, and the btree order
      // index; the delivery key and the pending index of a single merchant's table.
      for (const old of ['inbox_entries_runnable', 'inbox_entries_leased', 'inbox_entries_finished', 'inbox_entries_order', 'inbox_entries_pending']) {
        await client.query(`DROP INDEX IF EXISTS "${schema}".${old}`);
      }
      // Partial indexes: a received delivery enters only the pending one (besides its keys and
      // its order), which keeps the receiver's single insert cheap; each claim and purge query
      // names the status its index holds. The pending one gives the fair claim each tenant's due
      // entries (./claim.ts).
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_tenant_due ON ${table} (tenant, next_attempt_at, seq) WHERE status = 'pending'`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_processing ON ${table} (lease_until, seq) WHERE status = 'processing'`);
      // A tenant's counts and lists; only entries of a tenant, so a single merchant's inserts do not pay for it.
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_tenant_status ON ${table} (tenant, status, received_at) WHERE tenant <> ''`);
      // Ids of any length: a btree entry holds at most ~2.7 KB, so the delivery id is unique (per
      // tenant) by its md5 and looked up through a hash index, and an order's events are found by hash too.
      await client.query(`CREATE UNIQUE INDEX IF NOT EXISTS inbox_entries_delivery_tenant_key ON ${table} (md5(delivery_id), tenant)`);
      await client.query(`DROP INDEX IF EXISTS "${schema}".inbox_entries_delivery_key`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_delivery_hash ON ${table} USING hash (delivery_id)`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_order_hash ON ${table} USING hash (order_id)`);
      // The count of stats().invalidPayload.
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_invalid ON ${table} (seq) WHERE schema_issues IS NOT NULL`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_finished_at ON ${table} (status, finished_at) WHERE finished_at IS NOT NULL`);
      await migrateReconcile(client);
      await migrateDueTenants(client, { schema, entries: table });
      await migrateMissed(client, schema);
      await migrateDashboard(client);
      await purged.migrate(client);
    });

  // Reconciliation: the state of each order (kept by insert, with what it has had: see
  // ./order-history.ts) and the last reconcile's outcome.
  const orders = `"${schema}".inbox_orders`;
  const runs = `"${schema}".inbox_reconcile_runs`;
  const historyTables = { schema, entries: table, orders, statuses: `"${schema}".inbox_order_statuses`, verifiers: `"${schema}".inbox_verifiers` };
  async function migrateReconcile(client: PoolClient): Promise<void> {
    const [existing] = (await client.query<{ found: string | null }>(`SELECT to_regclass($1) AS found`, [orders])).rows;
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${orders} (
        tenant TEXT NOT NULL DEFAULT '',
        order_id TEXT NOT NULL,
        status TEXT,
        status_ts DOUBLE PRECISION NOT NULL DEFAULT 0,
        status_at BIGINT NOT NULL DEFAULT 0,
        last_event_at BIGINT NOT NULL,
        checked_at BIGINT,
        has_created BOOLEAN NOT NULL DEFAULT FALSE,
        PRIMARY KEY (tenant, order_id)
      )`);
    // No index on last_event_at: every event moves it (an index would stop HOT updates), and only a
    // reconcile, every few minutes, searches by it.
    await client.query(`CREATE TABLE IF NOT EXISTS ${runs} (id INTEGER PRIMARY KEY CHECK (id = 1), ran_at BIGINT NOT NULL, missed TEXT NOT NULL)`);
    if (!existing?.found) {
      // A database an earlier version wrote: each order's state from its stored entries (payloads
      // parsed here, where a malformed one cannot fail the migration).
      const rows = (await storedOrderEvents(client, table)).map((row) => ({ ...row, status: row.payload === null ? null : orderStatusOf({ ...entryOf(row), payload: row.payload }) }));
      for (const state of backfillOrderStates(rows)) {
        await client.query(`INSERT INTO ${orders} (order_id, status, status_ts, last_event_at, has_created) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, order_id) DO NOTHING`, [
          state.orderId,
          state.status,
          state.statusTs,
          state.lastEventAt,
          state.hasCreated,
        ]);
      }
    }
    await migrateOrderTenants(client, historyTables);
    await migrateOrderHistory(client, historyTables);
  }

  /**
   * Runs the insert of an entry. A reconcile entry is inserted in a transaction that tells the
   * trigger so (`integration_inbox.source`, and the order's version it was made from), and reads
   * back whether the trigger stored it covered; every other entry, as it always was.
   */
  async function withOrderState(
    entry: NewInboxEntry,
    insert: (run: <R>(sql: string, params: unknown[]) => Promise<R[]>) => Promise<'stored' | 'duplicate'>,
  ): Promise<'stored' | 'duplicate'> {
    if (entry.source !== 'reconcile' || !tracksOrder(entry)) return insert(query);
    return inTransaction(async (client) => {
      await client.query(`SELECT set_config('integration_inbox.source', 'reconcile', true), set_config('integration_inbox.order_version', $1, true)`, [
        entry.orderVersion === undefined ? '' : String(entry.orderVersion),
      ]);
      const run = async <R,>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows as R[];
      const result = await insert(run);
      if (result === 'stored' && (await run<{ status: string }>(`SELECT status FROM ${table} WHERE delivery_id = $1`, [entry.deliveryId]))[0]?.status === 'done') return 'duplicate';
      return result;
    });
  }

  /** Runs `work` in one transaction on a client of the pool (a client whose rollback failed is not reused). */
  async function inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await (await getPool()).connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  // What the dashboard reads: the order's references (filled at insert, so an order stays findable
  // after retention clears its payload), indexes for newest-first pages per status and per event and
  // for the hourly buckets, the workers' heartbeats and the operators' action log.
  async function migrateDashboard(client: PoolClient): Promise<void> {
    // Only what is missing: ALTER TABLE takes an exclusive lock even when the column is there, and
    // every process migrates as it starts while others work (4 workers starting at once deadlocked).
    const { rowCount } = await client.query(
      `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_entries' AND column_name = 'display_number'`,
      [schema],
    );
    if (rowCount === 0) {
      await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS display_number TEXT, ADD COLUMN IF NOT EXISTS external_order_id TEXT`);
      // A table an earlier version wrote: the references of the entries that still have a payload.
      // Stored payloads are verified JSON; should one not parse, the fill is skipped rather than
      // failing the migration (those entries stay findable by delivery and order id).
      await client.query('SAVEPOINT fill_references');
      try {
        await client.query(`UPDATE ${table} SET display_number = left(payload::jsonb #>> '{data,display_number}', 200), external_order_id = left(payload::jsonb #>> '{data,external_order_id}', 200)
          WHERE order_id IS NOT NULL AND payload IS NOT NULL`);
        await client.query('RELEASE SAVEPOINT fill_references');
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT fill_references');
      }
    }
    const indexes: Record<string, string> = {
      // Without the delivery id: a btree entry holds ~2.7 KB and ids may be longer. Ties in
      // received_at are ordered by an incremental sort, which reads only the tied rows.
      inbox_entries_received_at: '(received_at)',
      inbox_entries_status_received_at: '(status, received_at)',
      // Only the rare events: with every event in it, the planner read the claim's "has this order
      // an order.created" through this index, over all of them, at each claim (2.5× slower work).
      // The two order events are dense: the received_at index finds a page of them quickly.
      inbox_entries_rare_event_received_at: "(event, received_at) WHERE event NOT IN ('order.created', 'order.status_changed')",
      inbox_entries_display_number: '(display_number) WHERE display_number IS NOT NULL',
      inbox_entries_external_order: '(external_order_id) WHERE external_order_id IS NOT NULL',
    };
    for (const old of ['inbox_entries_event_received', 'inbox_entries_received', 'inbox_entries_status_received', 'inbox_entries_rare_event_received']) {
      await client.query(`DROP INDEX IF EXISTS "${schema}".${old}`);
    }
    const existing = await client.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'inbox_entries'`, [schema]);
    const present = new Set(existing.rows.map((row) => row.indexname));
    for (const [name, definition] of Object.entries(indexes)) {
      if (!present.has(name)) await client.query(`CREATE INDEX IF NOT EXISTS ${name} ON ${table} ${definition}`);
    }
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".inbox_workers (worker_id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL, claimed_at BIGINT)`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".inbox_actions (seq BIGSERIAL PRIMARY KEY, at BIGINT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL)`);
  }

  const changes = db.changes;

  // One NOTIFY per burst of inserts, sent after they committed, rather than one inside each insert:
  // a transaction that notifies takes the server's notification-queue lock at commit, so notifying
  // inserts commit one at a time (measured: 1.9× the floor's time per delivery against 1.2×
  // without). A wake asked for while one is in flight sends one more after it, so every stored
  // entry is followed by a notification sent after its commit. Workers poll too: a lost one costs latency only.
  let notifying: Promise<void> | undefined;
  let notifyAgain = false;
  const wakeWorkers = (): void => {
    if (notifying) {
      notifyAgain = true;
      return;
    }
    notifying = query('SELECT pg_notify($1, \'\')', [channel]).then(
      () => {},
      () => {},
    );
    void notifying.then(() => {
      notifying = undefined;
      if (notifyAgain && !db.closed) {
        notifyAgain = false;
        wakeWorkers();
      }
    });
  };

  return {
    migrate,

    insert: (entry) => withOrderState(entry, async (query) => {
      const references = orderReferences(entry);
      const rows = await query<{ stored: number }>(
        `INSERT INTO ${table} (${NEW_ENTRY_COLUMNS}, display_number, external_order_id, pair_after)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) ON CONFLICT ((md5(delivery_id)), tenant) DO NOTHING RETURNING 1 AS stored`,
        [...postgresValues(entry), references.displayNumber, references.externalOrderId, entry.verifiedBy ? (entry.pairAfter ?? null) : null],
      );
      if (rows.length === 0) return 'duplicate';
      wakeWorkers();
      return 'stored';
    }),

    async claim(request) {
      // Each step commits on its own (no transaction held across the walk), so a step that fails
      // (a connection the restarted server dropped) must not lose the leases an earlier step took:
      // what is leased is returned, and the next claim walks again.
      const leased: InboxRow[] = [];
      try {
        // The tenants with due work are looked up while the expired leases are taken: one round trip less.
        const [expired, walked] = await Promise.allSettled([claimExpired(query, table, COLUMNS, request), walkDueTenants(query, schema, table, request)]);
        if (expired.status === 'rejected') throw expired.reason;
        leased.push(...inClaimOrder(expired.value));
        if (walked.status === 'rejected') throw walked.reason;
        const wanted = request.limit - leased.length;
        if (wanted <= 0) return leased.map(withPayload);
        const { chosen, visited } = turnsOf(walked.value, wanted);
        leased.push(...inClaimOrder(await claimDue(query, table, COLUMNS, request, chosen, wanted)));
        await refreshDueTenants(query, schema, visited, request.now);
        if (visited.length > 0) request.walkedTo?.(visited.at(-1)!);
      } catch (error) {
        if (leased.length === 0) throw error;
      }
      return leased.map(withPayload);
    },

    async extendLease(deliveryId, workerId, leaseUntil, tenant) {
      const count = await changes(
        `UPDATE ${table} SET lease_until = $1 WHERE delivery_id = $2 AND status = 'processing' AND lease_owner = $3 AND ($4::text IS NULL OR tenant = $4)`,
        [leaseUntil, deliveryId, workerId, tenant ?? null],
      );
      return count === 1;
    },

    async complete(deliveryId, workerId, now, tenant) {
      const count = await changes(
        `UPDATE ${table} SET status = 'done', finished_at = $1, lease_owner = NULL, lease_until = NULL, last_error = NULL
         WHERE delivery_id = $2 AND status = 'processing' AND lease_owner = $3 AND ($4::text IS NULL OR tenant = $4)`,
        [now, deliveryId, workerId, tenant ?? null],
      );
      return count === 1;
    },

    async fail(deliveryId, { workerId, error, now, nextAttemptAt, tenant }) {
      const dead = nextAttemptAt === null;
      const count = await changes(
        `UPDATE ${table} SET status = $1, last_error = $2, next_attempt_at = $3, finished_at = $4, lease_owner = NULL, lease_until = NULL
         WHERE delivery_id = $5 AND status = 'processing' AND lease_owner = $6 AND ($7::text IS NULL OR tenant = $7)`,
        [dead ? 'dead' : 'pending', error, nextAttemptAt ?? now, dead ? now : null, deliveryId, workerId, tenant ?? null],
      );
      return count === 1;
    },

    async orderCreatedPayload(orderId, tenant) {
      const rows = await query<{ payload: string }>(
        `SELECT payload FROM ${table} WHERE order_id = $1 AND tenant = $2 AND event = 'order.created' AND payload IS NOT NULL ORDER BY seq LIMIT 1`,
        [toText(orderId), storedTenant(tenant)],
      );
      return fromText(rows[0]?.payload) ?? null;
    },

    async get(deliveryId, tenant) {
      const rows = await query<Row>(`SELECT ${COLUMNS}, payload FROM ${table} WHERE delivery_id = $1 AND ($2::text IS NULL OR tenant = $2) ORDER BY seq LIMIT 1`, [
        deliveryId,
        tenant ?? null,
      ]);
      return rows[0] ? withPayload(rows[0]) : undefined;
    },

    async list({ status, after, limit, tenant }) {
      const rows = await query<Row>(
        `SELECT ${COLUMNS} FROM ${table}
         WHERE ${tenantWhere(tenant, 5)} AND ($1::text IS NULL OR status = $1)
           AND ($2::bigint IS NULL OR (received_at, delivery_id) > ($2, $3::text))
         ORDER BY received_at, delivery_id LIMIT $4`,
        [status ?? null, after?.receivedAt ?? null, after?.id ?? null, limit, ...tenantParam(tenant)],
      );
      return rows.map(toEntry);
    },

    async stats(now, filter) {
      const mine = tenantWhere(filter?.tenant, 1);
      const params = tenantParam(filter?.tenant);
      const counts = await query<{ status: string; n: string }>(`SELECT status, COUNT(*) AS n FROM ${table} WHERE ${mine} GROUP BY status`, params);
      // One index lookup per status (inbox_entries_status_received): with IN, the planner walks the
      // received_at index from the oldest entry and filters, which reads the whole table when the
      // pending entries are the newest (0.2 s at a million entries).
      const [oldest] = await query<{ at: string | null }>(
        `SELECT LEAST((SELECT MIN(received_at) FROM ${table} WHERE status = 'pending' AND ${mine}), (SELECT MIN(received_at) FROM ${table} WHERE status = 'processing' AND ${mine})) AS at`,
        params,
      );
      const [invalid] = await query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE schema_issues IS NOT NULL AND ${mine}`, params);
      return statsOf(counts, oldest?.at ?? null, now, invalid?.n ?? 0);
    },

    async retry(deliveryId, now, tenant) {
      const count = await changes(
        `UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $1, finished_at = NULL, last_error = NULL
         WHERE delivery_id = $2 AND status IN ('done', 'dead') AND ($3::text IS NULL OR tenant = $3)`,
        [now, deliveryId, tenant ?? null],
      );
      return count >= 1;
    },

    retryDead: (now, filter) =>
      changes(
        `UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $1, finished_at = NULL, last_error = NULL WHERE status = 'dead' AND ${tenantWhere(filter?.tenant, 2)}`,
        [now, ...tenantParam(filter?.tenant)],
      ),

    // Whole entries leave their counts behind, for the charts (purged-activity.ts).
    purge: ({ status, finishedBefore, what, tenant }) =>
      what === 'entry'
        ? purged.purgeEntries(query, { status, finishedBefore, tenant })
        : changes(`UPDATE ${table} SET payload = NULL WHERE status = $1 AND finished_at < $2 AND payload IS NOT NULL AND ${tenantWhere(tenant, 3)}`, [
            status,
            finishedBefore,
            ...tenantParam(tenant),
          ]),

    purgePreview: (request) => purged.preview(query, request),

    async subscribe(listener) {
      if (options.listen === false) return () => {};
      let client: PoolClient | undefined;
      try {
        client = await (await getPool()).connect();
        client.on('notification', () => listener());
        // A lost listening connection only costs the wake-ups: workers keep polling.
        client.on('error', () => {});
        await client.query(`LISTEN "${channel}"`);
      } catch {
        client?.release(true);
        return () => {};
      }
      const held = client;
      listeners.add(held);
      return () => {
        if (listeners.delete(held)) held.release(true);
      };
    },

    async close() {
      // The last wake-up goes out first: a notification queued on a pool that is ending never
      // settles, and close() would never resolve.
      while (notifying) await notifying;
      const ended = db.close();
      for (const client of listeners) client.release(true);
      listeners.clear();
      await ended;
    },

    async staleOrders({ tenant, seenBefore, checkedBefore, finalStatuses, limit }) {
      await migrate();
      const rows = await query<InboxOrderRow>(
        `SELECT tenant, order_id, status, status_ts, last_event_at, checked_at, has_created, version FROM ${orders}
         WHERE tenant = $5 AND last_event_at <= $1 AND (checked_at IS NULL OR checked_at < $2)
           AND (NOT has_created OR status IS NULL OR status <> ALL($3::text[]))
         ORDER BY COALESCE(checked_at, last_event_at), order_id LIMIT $4`,
        [seenBefore, checkedBefore, [...finalStatuses], limit, storedTenant(tenant)],
      );
      return rows.map((row) => orderStateFromRow({ ...row, order_id: fromText(row.order_id) }));
    },

    async markChecked(checks, now, tenant) {
      await migrate();
      if (checks.length === 0) return;
      // What a reconcile read, recorded where nothing was stored for the order since (./order-history.ts).
      for (const check of checks) {
        if (check.status === undefined || check.version === undefined) continue;
        const { status, version } = check;
        await inTransaction((client) => recordReadStatus(client, historyTables, storedTenant(tenant), toText(check.orderId), status, version));
      }
      await changes(
        `UPDATE ${orders} o SET checked_at = $1, status = COALESCE(o.status, c.status)
         FROM unnest($2::text[], $3::text[]) AS c(order_id, status) WHERE o.tenant = $4 AND o.order_id = c.order_id`,
        [now, checks.map((check) => toText(check.orderId)), checks.map((check) => check.status ?? null), storedTenant(tenant)],
      );
    },

    ...postgresMissedMethods(db, schema, migrate),

    async page(request) {
      const { sql, params } = pageQuery(table, request, (n, type) => `$${n}::${type}`);
      return (await query<Row>(sql, params)).map(toEntry);
    },

    async activity({ since, until, bucketMs }) {
      const [received, finished, gone] = await Promise.all([
        query<{ b: string; n: string }>(`SELECT (received_at - $1::bigint) / $2::bigint AS b, COUNT(*) AS n FROM ${table} WHERE received_at >= $1 AND received_at < $3::bigint GROUP BY b`, [since, bucketMs, until]),
        query<{ status: string; b: string; n: string }>(
          `SELECT status, (finished_at - $1::bigint) / $2::bigint AS b, COUNT(*) AS n FROM ${table}
           WHERE status IN ('done', 'dead') AND finished_at IS NOT NULL AND finished_at >= $1 AND finished_at < $3::bigint GROUP BY status, b`,
          [since, bucketMs, until],
        ),
        purged.rows(query, { since, until, bucketMs }),
      ]);
      return withPurgedActivity(activityOf(since, bucketMs, received, finished), { since, until, bucketMs }, gone);
    },

    async has(deliveryIds, tenant) {
      if (deliveryIds.length === 0) return new Set<string>();
      const rows = await query<{ delivery_id: string }>(`SELECT delivery_id FROM ${table} WHERE delivery_id = ANY($1::text[]) AND ($2::text IS NULL OR tenant = $2)`, [
        deliveryIds,
        tenant ?? null,
      ]);
      return new Set(rows.map((row) => row.delivery_id));
    },

    async heartbeat({ workerId, now, claimed }) {
      await query(
        `INSERT INTO "${schema}".inbox_workers AS w (worker_id, seen_at, claimed_at) VALUES ($1, $2, $3)
         ON CONFLICT (worker_id) DO UPDATE SET seen_at = EXCLUDED.seen_at, claimed_at = COALESCE(EXCLUDED.claimed_at, w.claimed_at)`,
        [workerId, now, claimed ? now : null],
      );
      await query(`DELETE FROM "${schema}".inbox_workers WHERE seen_at < $1`, [now - 86_400_000]);
    },

    async workers() {
      const rows = await query<{ worker_id: string; seen_at: string; claimed_at: string | null }>(
        `SELECT worker_id, seen_at, claimed_at FROM "${schema}".inbox_workers ORDER BY seen_at DESC LIMIT 100`,
      );
      return rows.map((row) => ({ workerId: row.worker_id, seenAt: Number(row.seen_at), claimedAt: row.claimed_at === null ? null : Number(row.claimed_at) }));
    },

    async recordAction({ at, actor, action, detail }) {
      await query(`INSERT INTO "${schema}".inbox_actions (at, actor, action, detail) VALUES ($1, $2, $3, $4)`, [at, actor, action, detail]);
    },

    async actions(limit) {
      const rows = await query<{ at: string; actor: string; action: string; detail: string }>(
        `SELECT at, actor, action, detail FROM "${schema}".inbox_actions ORDER BY seq DESC LIMIT $1`,
        [limit],
      );
      return rows.map((row) => ({ at: Number(row.at), actor: row.actor, action: row.action, detail: row.detail }));
    },
  };
}
