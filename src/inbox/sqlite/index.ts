/**
 * `integration-sdk/inbox/sqlite`: the embedded inbox store on `node:sqlite` (Node ≥ 22.13, no
 * dependency). One file, WAL with `synchronous=FULL` (an answered delivery survives a power cut),
 * claims in `BEGIN IMMEDIATE` transactions so that several processes on one machine can share it.
 */
import { ConfigurationError } from '../../errors/integration-error.ts';
import type { ClaimRequest, FailRequest, InboxRow, InboxStore, InsertOptions, NewInboxEntry, PurgeRequest } from '../store.ts';
import { systemClock } from '../../clock.ts';
import { entryFromRow, entryWithPayloadFromRow, INBOX_COLUMNS, newEntryValues, statsOf } from '../store.ts';
import { addSqliteColumn, openSqliteFile, sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file; created with its tables when missing. */
  path: string;
  /**
   * How long one operation keeps retrying while another connection holds the write lock, in ms.
   * The retries wait asynchronously, so the event loop keeps serving.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox_entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL UNIQUE,
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
  finished_at INTEGER
);
CREATE INDEX IF NOT EXISTS inbox_entries_runnable ON inbox_entries (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS inbox_entries_leased ON inbox_entries (status, lease_until);
CREATE INDEX IF NOT EXISTS inbox_entries_order ON inbox_entries (order_id, ts, seq);
CREATE INDEX IF NOT EXISTS inbox_entries_finished ON inbox_entries (status, finished_at);
`;

// The runnable rule of InboxStore.claim, in SQL (:now, :orderWaitMs, :limit), once for entries whose
// lease expired and once for due pending ones: each walks its index in order and stops at :limit,
// where one query with an OR would test every runnable row on each claim.
const claimable = (due: string) => `
SELECT e.seq FROM inbox_entries e
WHERE ${due}
  AND (e.order_id IS NULL OR (
    NOT EXISTS (SELECT 1 FROM inbox_entries p WHERE p.order_id = e.order_id AND p.seq <> e.seq
      AND ((p.status IN ('pending', 'processing') AND ((p.event = 'order.created' AND e.event <> 'order.created')
        OR ((p.event = 'order.created') = (e.event = 'order.created') AND (p.ts < e.ts OR (p.ts = e.ts AND p.seq < e.seq)))))
        OR (p.status = 'processing' AND p.lease_until > :now)))
    AND (e.event <> 'order.status_changed' OR e.received_at + :orderWaitMs <= :now
      OR EXISTS (SELECT 1 FROM inbox_entries c WHERE c.order_id = e.order_id AND c.event = 'order.created'))))
ORDER BY ${due.includes('lease_until') ? 'e.lease_until' : 'e.next_attempt_at'}, e.seq
LIMIT :limit`;
const EXPIRED = claimable("e.status = 'processing' AND e.lease_until <= :now");
const DUE = claimable("e.status = 'pending' AND e.next_attempt_at <= :now");

type Row = InboxRow;
const toEntry = entryFromRow;
const withPayload = entryWithPayloadFromRow;
const COLUMNS = INBOX_COLUMNS;

/**
 * The inbox store on a SQLite file.
 *
 * @example
 * ```ts
 * import { createInbox } from 'integration-sdk/inbox';
 * import { sqliteStore } from 'integration-sdk/inbox/sqlite';
 *
 * const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET!, store: sqliteStore({ path: './integration-inbox.db' }) });
 * ```
 */
export function sqliteStore(options: SqliteStoreOptions): InboxStore {
  if (typeof options?.path !== 'string' || options.path === '') {
    throw new ConfigurationError('sqliteStore needs { path }: the database file.');
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  // A NaN deadline would never pass: a locked file would be retried forever.
  if (typeof busyTimeoutMs !== 'number' || !Number.isFinite(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ConfigurationError('sqliteStore: busyTimeoutMs must be a number of milliseconds >= 0.');
  }
  const file = openSqliteFile({ path: options.path, busyTimeoutMs, owner: 'sqliteStore', alternative: 'postgresStore' });
  const attempt = file.attempt;
  const transaction = sqliteTransaction;

  let migrated = false;
  async function migrate(deadlineMs?: number): Promise<void> {
    if (migrated) return;
    await attempt((database) => {
      database.exec('PRAGMA journal_mode = WAL');
      database.exec('PRAGMA synchronous = FULL');
      database.exec(SCHEMA);
      // Added after 0.1: the mark of a body that does not match the schema.
      addSqliteColumn(database, 'inbox_entries', 'schema_issues', 'TEXT');
      database.exec('CREATE INDEX IF NOT EXISTS inbox_entries_invalid ON inbox_entries (seq) WHERE schema_issues IS NOT NULL');
    }, deadlineMs);
    migrated = true;
  }
  /** `timeoutMs`: how long to wait for a lock, migration included (default `busyTimeoutMs`). */
  async function run<T>(operation: (db: Database) => T, timeoutMs?: number): Promise<T> {
    if (timeoutMs === undefined) {
      await migrate();
      return attempt(operation);
    }
    const deadline = systemClock.now() + timeoutMs;
    await migrate(timeoutMs);
    return attempt(operation, deadline - systemClock.now());
  }
  // A stored delivery must survive a power cut (FULL: the WAL is synced at each commit). A worker's
  // claim or `done` may be lost by one (NORMAL: synced at checkpoints, still safe against a killed
  // process): the entry then simply runs again, which at-least-once allows.
  const durable = <T>(operation: (db: Database) => T, timeoutMs?: number) =>
    run((database) => {
      database.exec('PRAGMA synchronous = FULL');
      return operation(database);
    }, timeoutMs);
  const relaxed = <T>(operation: (db: Database) => T) =>
    run((database) => {
      database.exec('PRAGMA synchronous = NORMAL');
      return operation(database);
    });

  return {
    migrate,

    insert: (entry: NewInboxEntry, insertOptions?: InsertOptions) =>
      durable((database) => {
        const result = database
          .prepare(
            `INSERT INTO inbox_entries (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at, schema_issues, last_error, finished_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (delivery_id) DO NOTHING`,
          )
          .run(...newEntryValues(entry));
        return Number(result.changes) === 1 ? 'stored' : 'duplicate';
      }, insertOptions?.timeoutMs),

    claim: (request: ClaimRequest) =>
      relaxed((database) =>
        transaction(database, () => {
          const parameters = { now: request.now, orderWaitMs: request.orderWaitMs, limit: request.limit };
          const seqs = database.prepare(EXPIRED).all(parameters) as { seq: number }[];
          if (seqs.length < request.limit) seqs.push(...(database.prepare(DUE).all({ ...parameters, limit: request.limit - seqs.length }) as { seq: number }[]));
          const update = database.prepare(
            `UPDATE inbox_entries SET status = 'processing', lease_owner = ?, lease_until = ?, attempts = attempts + 1
             WHERE seq = ? RETURNING ${COLUMNS}, payload`,
          );
          return seqs.map(({ seq }) => withPayload(update.get(request.workerId, request.now + request.leaseMs, seq) as Row));
        }),
      ),

    extendLease: (deliveryId, workerId, leaseUntil) =>
      relaxed((database) => {
        const result = database
          .prepare(`UPDATE inbox_entries SET lease_until = ? WHERE delivery_id = ? AND status = 'processing' AND lease_owner = ?`)
          .run(leaseUntil, deliveryId, workerId);
        return Number(result.changes) === 1;
      }),

    complete: (deliveryId, workerId, now) =>
      relaxed((database) => {
        const result = database
          .prepare(
            `UPDATE inbox_entries SET status = 'done', finished_at = ?, lease_owner = NULL, lease_until = NULL, last_error = NULL
             WHERE delivery_id = ? AND status = 'processing' AND lease_owner = ?`,
          )
          .run(now, deliveryId, workerId);
        return Number(result.changes) === 1;
      }),

    fail: (deliveryId, request: FailRequest) =>
      relaxed((database) => {
        const dead = request.nextAttemptAt === null;
        const result = database
          .prepare(
            `UPDATE inbox_entries SET status = ?, last_error = ?, next_attempt_at = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL
             WHERE delivery_id = ? AND status = 'processing' AND lease_owner = ?`,
          )
          .run(dead ? 'dead' : 'pending', request.error, request.nextAttemptAt ?? request.now, dead ? request.now : null, deliveryId, request.workerId);
        return Number(result.changes) === 1;
      }),

    orderCreatedPayload: (orderId) =>
      durable((database) => {
        const row = database
          .prepare(`SELECT payload FROM inbox_entries WHERE order_id = ? AND event = 'order.created' AND payload IS NOT NULL ORDER BY seq LIMIT 1`)
          .get(orderId) as { payload: string } | undefined;
        return row?.payload ?? null;
      }),

    get: (deliveryId) =>
      durable((database) => {
        const row = database.prepare(`SELECT ${COLUMNS}, payload FROM inbox_entries WHERE delivery_id = ?`).get(deliveryId) as Row | undefined;
        return row ? withPayload(row) : undefined;
      }),

    list: ({ status, after, limit }) =>
      durable((database) => {
        const rows = database
          .prepare(
            `SELECT ${COLUMNS} FROM inbox_entries
             WHERE (:status IS NULL OR status = :status)
               AND (:afterAt IS NULL OR received_at > :afterAt OR (received_at = :afterAt AND delivery_id > :afterId))
             ORDER BY received_at, delivery_id LIMIT :limit`,
          )
          .all({ status: status ?? null, afterAt: after?.receivedAt ?? null, afterId: after?.id ?? null, limit }) as Row[];
        return rows.map(toEntry);
      }),

    stats: (now) =>
      durable((database) => {
        const counts = database.prepare(`SELECT status, COUNT(*) AS n FROM inbox_entries GROUP BY status`).all() as { status: string; n: number }[];
        const oldest = database
          .prepare(`SELECT MIN(received_at) AS at FROM inbox_entries WHERE status IN ('pending', 'processing')`)
          .get() as { at: number | null };
        const invalid = database.prepare(`SELECT COUNT(*) AS n FROM inbox_entries WHERE schema_issues IS NOT NULL`).get() as { n: number };
        return statsOf(counts, oldest.at, now, invalid.n);
      }),

    retry: (deliveryId, now) =>
      durable((database) => {
        const result = database
          .prepare(
            `UPDATE inbox_entries SET status = 'pending', attempts = 0, next_attempt_at = ?, finished_at = NULL, last_error = NULL
             WHERE delivery_id = ? AND status IN ('done', 'dead')`,
          )
          .run(now, deliveryId);
        return Number(result.changes) === 1;
      }),

    retryDead: (now) =>
      durable((database) => {
        const result = database
          .prepare(`UPDATE inbox_entries SET status = 'pending', attempts = 0, next_attempt_at = ?, finished_at = NULL, last_error = NULL WHERE status = 'dead'`)
          .run(now);
        return Number(result.changes);
      }),

    purge: (request: PurgeRequest) =>
      durable((database) => {
        const sql =
          request.what === 'entry'
            ? `DELETE FROM inbox_entries WHERE status = ? AND finished_at < ?`
            : `UPDATE inbox_entries SET payload = NULL WHERE status = ? AND finished_at < ? AND payload IS NOT NULL`;
        return Number(database.prepare(sql).run(request.status, request.finishedBefore).changes);
      }),

    async close() {
      file.close();
    },
  };
}
