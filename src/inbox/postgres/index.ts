/**
 * `integration-sdk/inbox/postgres`: the inbox store on Postgres, for receivers and workers on
 * several machines. Needs `pg` ≥ 8 (an optional peer dependency, loaded only by this entry).
 * Claims with `FOR UPDATE SKIP LOCKED`; new entries wake workers with `LISTEN/NOTIFY`, and workers
 * also poll, so that it works through PgBouncer in transaction mode (where LISTEN does not).
 */
import type { PoolClient } from 'pg';
import { checkPostgresOptions, postgresPool, type PostgresConnectionOptions } from '../../storage/postgres.ts';
import { activityOf, entryFromRow, entryWithPayloadFromRow, INBOX_COLUMNS, orderReferences, pageQuery, statsOf } from '../store.ts';
import type { InboxRow, InboxStore } from '../store.ts';

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
const toEntry = entryFromRow;
const withPayload = entryWithPayloadFromRow;
const COLUMNS = INBOX_COLUMNS;



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
          delivery_id TEXT NOT NULL UNIQUE,
          event TEXT NOT NULL,
          order_id TEXT,
          ts BIGINT NOT NULL,
          payload TEXT,
          known BOOLEAN NOT NULL,
          status TEXT NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          received_at BIGINT NOT NULL,
          next_attempt_at BIGINT NOT NULL,
          lease_owner TEXT,
          lease_until BIGINT,
          finished_at BIGINT
        )`);
      // Partial indexes: a received delivery enters only the pending one (besides its keys and
      // its order), which keeps the receiver's single insert cheap; each claim and purge query
      // names the status its index holds.
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_pending ON ${table} (next_attempt_at, seq) WHERE status = 'pending'`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_processing ON ${table} (lease_until, seq) WHERE status = 'processing'`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_order ON ${table} (order_id, ts, seq)`);
      await client.query(`CREATE INDEX IF NOT EXISTS inbox_entries_finished_at ON ${table} (status, finished_at) WHERE finished_at IS NOT NULL`);
      // The full indexes of earlier 0.1 builds, which every insert paid for.
      for (const old of ['inbox_entries_runnable', 'inbox_entries_leased', 'inbox_entries_finished']) await client.query(`DROP INDEX IF EXISTS "${schema}".${old}`);
      await migrateDashboard(client);
    });

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
        await client.query(`UPDATE ${table} SET display_number = payload::jsonb #>> '{data,display_number}', external_order_id = payload::jsonb #>> '{data,external_order_id}'
          WHERE order_id IS NOT NULL AND payload IS NOT NULL`);
        await client.query('RELEASE SAVEPOINT fill_references');
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT fill_references');
      }
    }
    const indexes: Record<string, string> = {
      inbox_entries_received: '(received_at, delivery_id)',
      inbox_entries_status_received: '(status, received_at, delivery_id)',
      // Only the rare events: with every event in it, the planner read the claim's "has this order
      // an order.created" through this index, over all of them, at each claim (2.5× slower work).
      // The two order events are dense: the received_at index finds a page of them quickly.
      inbox_entries_rare_event_received: "(event, received_at, delivery_id) WHERE event NOT IN ('order.created', 'order.status_changed')",
      inbox_entries_display_number: '(display_number) WHERE display_number IS NOT NULL',
      inbox_entries_external_order: '(external_order_id) WHERE external_order_id IS NOT NULL',
    };
    await client.query(`DROP INDEX IF EXISTS "${schema}".inbox_entries_event_received`);
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

    async insert(entry) {
      const references = orderReferences(entry);
      const rows = await query<{ stored: number }>(
        `INSERT INTO ${table} (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at, display_number, external_order_id)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7, $8, $9) ON CONFLICT (delivery_id) DO NOTHING RETURNING 1 AS stored`,
        [entry.deliveryId, entry.event, entry.orderId, entry.ts, entry.payload, entry.known, entry.receivedAt, references.displayNumber, references.externalOrderId],
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
        [orderId],
      );
      return rows[0]?.payload ?? null;
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
      // One index lookup per status (inbox_entries_status_received): with IN, the planner walks the
      // received_at index from the oldest entry and filters, which reads the whole table when the
      // pending entries are the newest (0.2 s at a million entries).
      const [oldest] = await query<{ at: string | null }>(
        `SELECT LEAST((SELECT MIN(received_at) FROM ${table} WHERE status = 'pending'), (SELECT MIN(received_at) FROM ${table} WHERE status = 'processing')) AS at`,
      );
      return statsOf(counts, oldest?.at ?? null, now);
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
      // Wake-ups in flight first: pg's pool, ended while a query waits in its queue for an idle
      // client, never answers that query, and close() would wait for it forever.
      while (notifying) await notifying;
      const ended = db.close();
      for (const client of listeners) client.release(true);
      listeners.clear();
      await ended;
    },

    async page(request) {
      const { sql, params } = pageQuery(table, request, (n, type) => `$${n}::${type}`);
      return (await query<Row>(sql, params)).map(toEntry);
    },

    async activity({ since, until, bucketMs }) {
      const [received, finished] = await Promise.all([
        query<{ b: string; n: string }>(`SELECT (received_at - $1::bigint) / $2::bigint AS b, COUNT(*) AS n FROM ${table} WHERE received_at >= $1 AND received_at < $3::bigint GROUP BY b`, [since, bucketMs, until]),
        query<{ status: string; b: string; n: string }>(
          `SELECT status, (finished_at - $1::bigint) / $2::bigint AS b, COUNT(*) AS n FROM ${table}
           WHERE status IN ('done', 'dead') AND finished_at IS NOT NULL AND finished_at >= $1 AND finished_at < $3::bigint GROUP BY status, b`,
          [since, bucketMs, until],
        ),
      ]);
      return activityOf(since, bucketMs, received, finished);
    },

    async has(deliveryIds) {
      if (deliveryIds.length === 0) return new Set<string>();
      const rows = await query<{ delivery_id: string }>(`SELECT delivery_id FROM ${table} WHERE delivery_id = ANY($1::text[])`, [deliveryIds]);
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
