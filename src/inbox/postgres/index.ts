/**
 * `integration-sdk/inbox/postgres`: the inbox store on Postgres, for receivers and workers on
 * several machines. Needs `pg` ≥ 8 (an optional peer dependency, loaded only by this entry).
 * Claims with `FOR UPDATE SKIP LOCKED`; new entries wake workers with `LISTEN/NOTIFY`, and workers
 * also poll, so that it works through PgBouncer in transaction mode (where LISTEN does not).
 */
import type { PoolClient } from 'pg';
import { checkPostgresOptions, postgresPool, type PostgresConnectionOptions } from '../../storage/postgres.ts';
import { entryFromRow, entryWithPayloadFromRow, INBOX_COLUMNS, newEntryValues, statsOf } from '../store.ts';
import type { InboxRow, InboxStore, NewInboxEntry } from '../store.ts';

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

// Postgres text cannot hold U+0000, which a JSON string may (an `order_id` of "a\u0000b", a body
// with a NUL byte): such a value is stored as a marked JSON string, and read back as it was.
// Values without a NUL (all real ones) are stored as they are.
const NUL_MARK = '\u0001integration-sdk:json:';
function toText<T extends string | null>(value: T): T {
  return (value !== null && (value.includes('\u0000') || value.startsWith(NUL_MARK)) ? NUL_MARK + JSON.stringify(value) : value) as T;
}
function fromText<T extends string | null | undefined>(value: T): T {
  return (typeof value === 'string' && value.startsWith(NUL_MARK) ? (JSON.parse(value.slice(NUL_MARK.length)) as string) : value) as T;
}
const decoded = (row: Row): Row => ({ ...row, order_id: fromText(row.order_id), payload: fromText(row.payload) });
const toEntry = (row: Row) => entryFromRow(decoded(row));
function postgresValues(entry: NewInboxEntry): unknown[] {
  const values: unknown[] = newEntryValues(entry);
  values[2] = toText(entry.orderId);
  values[4] = toText(entry.payload);
  values[5] = entry.known;
  return values;
}
const withPayload = (row: Row) => entryWithPayloadFromRow(decoded(row));

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
          schema_issues TEXT
        )`);
      // A table an earlier version made. Each change is made only when needed, and before any
      // CREATE INDEX: ALTER TABLE takes the table's strongest lock, and asking for it while holding
      // the share lock of an index build deadlocks with a worker that is claiming meanwhile.
      const [found] = (await client.query<{ ts_type: string; has_issues: boolean; has_btree_key: boolean }>(
        `SELECT
           (SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_entries' AND column_name = 'ts') AS ts_type,
           EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'inbox_entries' AND column_name = 'schema_issues') AS has_issues,
           EXISTS (SELECT 1 FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 AND c.conname = 'inbox_entries_delivery_id_key') AS has_btree_key`,
        [schema],
      )).rows;
      // 0.1: an integer ts refused 1700000000.25; no schema_issues; a btree unique key and order
      // index refused ids over ~2.7 KB.
      if (found && found.ts_type !== 'double precision') await client.query(`ALTER TABLE ${table} ALTER COLUMN ts TYPE DOUBLE PRECISION`);
      if (found && !found.has_issues) await client.query(`ALTER TABLE ${table} ADD COLUMN schema_issues TEXT`);
      if (found?.has_btree_key) await client.query(`ALTER TABLE ${table} DROP CONSTRAINT inbox_entries_delivery_id_key`);
      // The full indexes of earlier 0.1 builds, which every insert paid for, and the btree order index.
      for (const old of ['inbox_entries_runnable', 'inbox_entries_leased', 'inbox_entries_finished', 'inbox_entries_order']) await client.query(`DROP INDEX IF EXISTS "${schema}".${old}`);
      // Partial indexes: a received delivery enters only the pending one (besides its keys and
      // its order), which keeps the receiver's single insert cheap; each claim and purge query
      // names the status its index holds.
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_pending ON ${table} (next_attempt_at, seq) WHERE status = 'pending'`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_processing ON ${table} (lease_until, seq) WHERE status = 'processing'`);
      // Ids of any length: a btree entry holds at most ~2.7 KB, so the delivery id is unique by
      // its md5 and looked up through a hash index, and an order's events are found by hash too.
      await client.query(`CREATE UNIQUE INDEX IF NOT EXISTS inbox_entries_delivery_key ON ${table} (md5(delivery_id))`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_delivery_hash ON ${table} USING hash (delivery_id)`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_order_hash ON ${table} USING hash (order_id)`);
      // The count of stats().invalidPayload.
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_invalid ON ${table} (seq) WHERE schema_issues IS NOT NULL`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_finished_at ON ${table} (status, finished_at) WHERE finished_at IS NOT NULL`);
    });

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

    async insert(entry) {
      const rows = await query<{ stored: number }>(
        `INSERT INTO ${table} (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at, schema_issues, last_error, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT ((md5(delivery_id))) DO NOTHING RETURNING 1 AS stored`,
        postgresValues(entry),
      );
      if (rows.length === 0) return 'duplicate';
      wakeWorkers();
      return 'stored';
    },

    async claim({ workerId, now, leaseMs, limit, orderWaitMs }) {
      // The runnable rule of InboxStore.claim, once for expired leases and once for due entries, so
      // that each walks its index in order and stops at the limit. SKIP LOCKED: concurrent claims
      // take different rows.
      const claimWhere = async (due: string, order: string, count: number) =>
        query<Row & { seq: string }>(
          `WITH picked AS (
             SELECT e.seq FROM ${table} e
             WHERE ${due}
               AND (e.order_id IS NULL OR (
                 NOT EXISTS (SELECT 1 FROM ${table} p WHERE p.order_id = e.order_id AND p.seq <> e.seq
                   AND ((p.status IN ('pending', 'processing') AND ((p.event = 'order.created' AND e.event <> 'order.created')
                     OR ((p.event = 'order.created') = (e.event = 'order.created') AND (p.ts < e.ts OR (p.ts = e.ts AND p.seq < e.seq)))))
                     OR (p.status = 'processing' AND p.lease_until > $1)))
                 AND (e.event <> 'order.status_changed' OR e.received_at + $2 <= $1
                   OR EXISTS (SELECT 1 FROM ${table} c WHERE c.order_id = e.order_id AND c.event = 'order.created'))))
             ORDER BY ${order}, e.seq
             LIMIT $3
             FOR UPDATE SKIP LOCKED
           )
           UPDATE ${table} t SET status = 'processing', lease_owner = $4, lease_until = $5, attempts = t.attempts + 1
           FROM picked WHERE t.seq = picked.seq
           RETURNING ${COLUMNS.split(', ').map((column) => `t.${column}`).join(', ')}, t.payload, t.seq`,
          [now, orderWaitMs, count, workerId, now + leaseMs],
        );
      const bySeq = (rows: Array<Row & { seq: string }>) => rows.sort((a, b) => Number(a.seq) - Number(b.seq));
      const expired = bySeq(await claimWhere(`e.status = 'processing' AND e.lease_until <= $1`, 'e.lease_until', limit));
      const due = expired.length < limit ? bySeq(await claimWhere(`e.status = 'pending' AND e.next_attempt_at <= $1`, 'e.next_attempt_at', limit - expired.length)) : [];
      return [...expired, ...due].map(withPayload);
    },

    async extendLease(deliveryId, workerId, leaseUntil) {
      const count = await changes(`UPDATE ${table} SET lease_until = $1 WHERE delivery_id = $2 AND status = 'processing' AND lease_owner = $3`, [
        leaseUntil,
        deliveryId,
        workerId,
      ]);
      return count === 1;
    },

    async complete(deliveryId, workerId, now) {
      const count = await changes(
        `UPDATE ${table} SET status = 'done', finished_at = $1, lease_owner = NULL, lease_until = NULL, last_error = NULL
         WHERE delivery_id = $2 AND status = 'processing' AND lease_owner = $3`,
        [now, deliveryId, workerId],
      );
      return count === 1;
    },

    async fail(deliveryId, { workerId, error, now, nextAttemptAt }) {
      const dead = nextAttemptAt === null;
      const count = await changes(
        `UPDATE ${table} SET status = $1, last_error = $2, next_attempt_at = $3, finished_at = $4, lease_owner = NULL, lease_until = NULL
         WHERE delivery_id = $5 AND status = 'processing' AND lease_owner = $6`,
        [dead ? 'dead' : 'pending', error, nextAttemptAt ?? now, dead ? now : null, deliveryId, workerId],
      );
      return count === 1;
    },

    async orderCreatedPayload(orderId) {
      const rows = await query<{ payload: string }>(
        `SELECT payload FROM ${table} WHERE order_id = $1 AND event = 'order.created' AND payload IS NOT NULL ORDER BY seq LIMIT 1`,
        [toText(orderId)],
      );
      return fromText(rows[0]?.payload) ?? null;
    },

    async get(deliveryId) {
      const rows = await query<Row>(`SELECT ${COLUMNS}, payload FROM ${table} WHERE delivery_id = $1`, [deliveryId]);
      return rows[0] ? withPayload(rows[0]) : undefined;
    },

    async list({ status, after, limit }) {
      const rows = await query<Row>(
        `SELECT ${COLUMNS} FROM ${table}
         WHERE ($1::text IS NULL OR status = $1)
           AND ($2::bigint IS NULL OR (received_at, delivery_id) > ($2, $3::text))
         ORDER BY received_at, delivery_id LIMIT $4`,
        [status ?? null, after?.receivedAt ?? null, after?.id ?? null, limit],
      );
      return rows.map(toEntry);
    },

    async stats(now) {
      const counts = await query<{ status: string; n: string }>(`SELECT status, COUNT(*) AS n FROM ${table} GROUP BY status`);
      const [oldest] = await query<{ at: string | null }>(`SELECT MIN(received_at) AS at FROM ${table} WHERE status IN ('pending', 'processing')`);
      const [invalid] = await query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE schema_issues IS NOT NULL`);
      return statsOf(counts, oldest?.at ?? null, now, invalid?.n ?? 0);
    },

    async retry(deliveryId, now) {
      const count = await changes(
        `UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $1, finished_at = NULL, last_error = NULL
         WHERE delivery_id = $2 AND status IN ('done', 'dead')`,
        [now, deliveryId],
      );
      return count === 1;
    },

    retryDead: (now) =>
      changes(`UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = $1, finished_at = NULL, last_error = NULL WHERE status = 'dead'`, [
        now,
      ]),

    purge: ({ status, finishedBefore, what }) =>
      changes(
        what === 'entry'
          ? `DELETE FROM ${table} WHERE status = $1 AND finished_at < $2`
          : `UPDATE ${table} SET payload = NULL WHERE status = $1 AND finished_at < $2 AND payload IS NOT NULL`,
        [status, finishedBefore],
      ),

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
  };
}
