/**
 * `integration-sdk/inbox/sqlite`: the inbox on one SQLite file through `node:sqlite` (Node >=
 * 22.13, no dependency). Several processes on one machine may share the file: claims run in a
 * writing transaction (`BEGIN IMMEDIATE`), and a write is durable before the receiver answers 2xx
 * (WAL with `synchronous=FULL`).
 */
import { ConfigurationError } from '../../errors/index.ts';
import type { ClaimedEntry, ClaimOptions, InboxEntry, InboxStats, InboxStatus, InboxStore, NewDelivery } from '../types.ts';

/** Options of `sqliteStore`. */
export interface SqliteStoreOptions {
  /** The database file; created when missing. */
  path: string;
  /**
   * How long a write waits for another process's transaction before failing (the receiver then
   * answers 503). Blocks the event loop meanwhile (node:sqlite is synchronous): keep it short.
   * @default 2000
   */
  busyTimeoutMs?: number;
}

interface Statement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

/** `DatabaseSync` on Node 22-25, `Database` from Node 26, looked up when a store is made. */
function openDatabase(path: string): Database {
  const getBuiltinModule = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  const sqlite = getBuiltinModule?.('node:sqlite') as { DatabaseSync?: new (path: string) => Database; Database?: new (path: string) => Database } | undefined;
  const Constructor = sqlite?.DatabaseSync ?? sqlite?.Database;
  if (!Constructor) throw new ConfigurationError('sqliteStore needs node:sqlite (Node 22.13 or newer)');
  return new Constructor(path);
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox_entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL UNIQUE,
  event TEXT NOT NULL,
  order_id TEXT,
  event_ts INTEGER NOT NULL,
  payload TEXT,
  known INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  last_error TEXT,
  received_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX IF NOT EXISTS inbox_entries_runnable ON inbox_entries (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS inbox_entries_order ON inbox_entries (order_id, event_ts, seq);
`;

/**
 * The inbox's SQLite store.
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
  if (typeof options?.path !== 'string' || options.path === '') throw new ConfigurationError('sqliteStore needs path: the database file');
  const busyTimeoutMs = options.busyTimeoutMs ?? 2_000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new ConfigurationError('sqliteStore: busyTimeoutMs must be a whole number of milliseconds ≥ 0');
  const db = openDatabase(options.path);
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;`);
  db.exec(SCHEMA);

  const insert = db.prepare(
    `INSERT INTO inbox_entries (delivery_id, event, order_id, event_ts, payload, known, status, next_attempt_at, received_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (delivery_id) DO NOTHING`,
  );
  const candidates = db.prepare(
    `SELECT seq, delivery_id, event, order_id, event_ts, payload, attempts, received_at FROM inbox_entries
     WHERE (status = 'pending' AND next_attempt_at <= ?) OR (status = 'processing' AND lease_until < ?)
     ORDER BY event_ts, seq LIMIT ?`,
  );
  // An earlier event of the same order not finished yet: this one waits its turn.
  const earlierUnfinished = db.prepare(
    `SELECT 1 FROM inbox_entries WHERE order_id = ? AND status IN ('pending', 'processing')
     AND (event_ts < ? OR (event_ts = ? AND seq < ?)) LIMIT 1`,
  );
  const orderCreated = db.prepare(`SELECT payload FROM inbox_entries WHERE order_id = ? AND event = 'order.created' ORDER BY seq LIMIT 1`);
  const hasOrderCreated = db.prepare(`SELECT 1 FROM inbox_entries WHERE order_id = ? AND event = 'order.created' LIMIT 1`);
  const take = db.prepare(`UPDATE inbox_entries SET status = 'processing', lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE seq = ?`);
  const extend = db.prepare(`UPDATE inbox_entries SET lease_until = ? WHERE delivery_id = ? AND status = 'processing' AND lease_owner = ?`);
  const complete = db.prepare(
    `UPDATE inbox_entries SET status = 'done', lease_owner = NULL, lease_until = NULL, finished_at = ? WHERE delivery_id = ? AND status = 'processing' AND lease_owner = ?`,
  );
  const fail = db.prepare(
    `UPDATE inbox_entries SET status = ?, lease_owner = NULL, lease_until = NULL, last_error = ?, next_attempt_at = ?, finished_at = ?
     WHERE delivery_id = ? AND status = 'processing' AND lease_owner = ?`,
  );
  const payload = db.prepare(`SELECT payload FROM inbox_entries WHERE delivery_id = ?`);
  const counts = db.prepare(`SELECT status, COUNT(*) AS n, MIN(received_at) AS oldest FROM inbox_entries GROUP BY status`);
  const retry = db.prepare(
    `UPDATE inbox_entries SET status = 'pending', next_attempt_at = ?, lease_owner = NULL, lease_until = NULL, finished_at = NULL
     WHERE delivery_id = ? AND status IN ('dead', 'done') AND payload IS NOT NULL`,
  );
  const retryDead = db.prepare(`UPDATE inbox_entries SET status = 'pending', next_attempt_at = ?, finished_at = NULL WHERE status = 'dead' AND payload IS NOT NULL`);
  const purge = db.prepare(`DELETE FROM inbox_entries WHERE status = ? AND received_at < ?`);
  const dropPayloads = db.prepare(`UPDATE inbox_entries SET payload = NULL WHERE status = 'done' AND finished_at < ? AND payload IS NOT NULL`);
  const dropRows = db.prepare(`DELETE FROM inbox_entries WHERE status = 'done' AND finished_at < ?`);

  /** Runs `work` in a writing transaction: one writer at a time across processes. */
  function writing<T>(work: () => T): T {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }

  // Synchronous underneath: each method still answers with a promise, as the interface says, and
  // a SQLite error becomes a rejection (never a throw out of a receiver).
  const promised = <A extends unknown[], T>(work: (...args: A) => T) => (...args: A): Promise<T> => {
    try {
      return Promise.resolve(work(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  };

  return {
    insert: promised((delivery: NewDelivery) => {
      const { changes } = insert.run(delivery.deliveryId, delivery.event, delivery.orderId, delivery.ts, delivery.payload, delivery.known ? 1 : 0, delivery.receivedAt, delivery.receivedAt);
      return Number(changes) === 1 ? 'stored' : 'duplicate';
    }),
    claim: promised((options: ClaimOptions) =>
      writing(() => {
        const claimed: ClaimedEntry[] = [];
        const orders = new Set<string>();
        for (const row of candidates.all(options.now, options.now, Math.max(options.limit * 8, 32))) {
          if (claimed.length >= options.limit) break;
          const orderId = row.order_id as string | null;
          if (orderId !== null) {
            if (orders.has(orderId)) continue;
            if (earlierUnfinished.get(orderId, row.event_ts, row.event_ts, row.seq)) continue;
            const waitingForCreated =
              row.event !== 'order.created' && (row.received_at as number) + options.orderWaitMs > options.now && !hasOrderCreated.get(orderId);
            if (waitingForCreated) continue;
            orders.add(orderId);
          }
          take.run(options.workerId, options.now + options.leaseMs, row.seq);
          claimed.push({ deliveryId: row.delivery_id as string, event: row.event as string, orderId, payload: (row.payload as string | null) ?? '', attempt: (row.attempts as number) + 1 });
        }
        return claimed;
      }),
    ),
    extendLease: promised((deliveryId: string, workerId: string, until: number) => Number(extend.run(until, deliveryId, workerId).changes) === 1),
    complete: promised((deliveryId: string, workerId: string, now: number) => void complete.run(now, deliveryId, workerId)),
    fail: promised((deliveryId: string, workerId: string, outcome: { error: string; nextAttemptAt: number; dead: boolean }) => {
      fail.run(outcome.dead ? 'dead' : 'pending', outcome.error, outcome.nextAttemptAt, outcome.dead ? outcome.nextAttemptAt : null, deliveryId, workerId);
    }),
    payload: promised((deliveryId: string) => (payload.get(deliveryId)?.payload as string | null | undefined) ?? undefined),
    orderCreatedPayload: promised((orderId: string) => (orderCreated.get(orderId)?.payload as string | null | undefined) ?? undefined),
    stats: promised((now: number): InboxStats => {
      const stats: InboxStats = { received: 0, pending: 0, processing: 0, done: 0, dead: 0, oldestPendingAgeMs: 0 };
      for (const row of counts.all()) {
        const status = row.status as InboxStatus;
        const n = Number(row.n);
        stats[status] = n;
        stats.received += n;
        if (status === 'pending') stats.oldestPendingAgeMs = Math.max(0, now - Number(row.oldest));
      }
      return stats;
    }),
    entries: promised((filter: { status?: InboxStatus; limit?: number }): InboxEntry[] => {
      const limit = filter.limit ?? 1_000;
      const rows = filter.status
        ? db.prepare(`SELECT * FROM inbox_entries WHERE status = ? ORDER BY seq LIMIT ?`).all(filter.status, limit)
        : db.prepare(`SELECT * FROM inbox_entries ORDER BY seq LIMIT ?`).all(limit);
      return rows.map((row) => ({
        deliveryId: row.delivery_id as string,
        event: row.event as string,
        status: row.status as InboxStatus,
        attempts: Number(row.attempts),
        lastError: (row.last_error as string | null) ?? null,
        orderId: (row.order_id as string | null) ?? null,
        receivedAt: new Date(Number(row.received_at)),
      }));
    }),
    retry: promised((deliveryId: string, now: number) => Number(retry.run(now, deliveryId).changes) === 1),
    retryDead: promised((now: number) => Number(retryDead.run(now).changes)),
    purge: promised((status: InboxStatus, before: number) => Number(purge.run(status, before).changes)),
    applyRetention: promised((payloadBefore: number, rowBefore: number) => {
      dropPayloads.run(payloadBefore);
      dropRows.run(rowBefore);
    }),
    close: promised(() => db.close()),
  };
}
