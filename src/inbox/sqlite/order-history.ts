/**
 * The SQLite side of "a status handled once" (src/inbox/order-history.ts): each order event is
 * stored in one write transaction with the order's state and what it has had, and an event that
 * repeats a change the other way already brought is stored covered (`done`, never run).
 */
import { addSqliteColumn, sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';
import { applyOrderEvent, emptyHistory, recordRead, replayHistories, statusesOf, type OrderHistory, type StatusEvidence } from '../order-history.ts';
import { orderStatusOf, storedTenant, tracksOrder, type NewInboxEntry } from '../store.ts';
import { pairAfterOf, pairKeyOf } from '../copies.ts';

/** What each order has had, per status (the shape the tenants' migration rebuilds an older table into). */
export const STATUSES_SHAPE = `(
  tenant TEXT NOT NULL DEFAULT '',
  order_id TEXT NOT NULL,
  status TEXT NOT NULL,
  seen_version INTEGER,
  entered_from TEXT,
  left_version INTEGER,
  cover_version INTEGER,
  PRIMARY KEY (tenant, order_id, status)
)`;
const STATUSES_SCHEMA = `CREATE TABLE IF NOT EXISTS inbox_order_statuses ${STATUSES_SHAPE}`;

interface OrderRow {
  status: string | null;
  status_ts: number;
  status_at: number;
  last_event_at: number;
  has_created: number;
  version: number;
  created_cover: number;
}
interface StatusRow {
  status: string;
  seen_version: number | null;
  entered_from: string | null;
  left_version: number | null;
  cover_version: number | null;
}

function historyOf(database: Database, tenant: string, orderId: string): OrderHistory {
  const order = database
    .prepare('SELECT status, status_ts, status_at, last_event_at, has_created, version, created_cover FROM inbox_orders WHERE tenant = ? AND order_id = ?')
    .get(tenant, orderId) as OrderRow | undefined;
  if (!order) return emptyHistory();
  const rows = database.prepare('SELECT status, seen_version, entered_from, left_version, cover_version FROM inbox_order_statuses WHERE tenant = ? AND order_id = ?').all(tenant, orderId) as StatusRow[];
  return {
    version: Number(order.version),
    status: order.status,
    statusTs: Number(order.status_ts),
    statusRank: Number(order.status_at),
    lastEventAt: Number(order.last_event_at),
    hasCreated: Boolean(order.has_created),
    createdCover: Boolean(order.created_cover),
    statuses: new Map(rows.map((row) => [row.status, { seenVersion: row.seen_version, enteredFrom: row.entered_from, leftVersion: row.left_version, coverVersion: row.cover_version }])),
  };
}

function writeStatus(database: Database, tenant: string, orderId: string, status: string, evidence: StatusEvidence): void {
  database
    .prepare(
      `INSERT INTO inbox_order_statuses (tenant, order_id, status, seen_version, entered_from, left_version, cover_version) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, order_id, status) DO UPDATE SET seen_version = excluded.seen_version, entered_from = excluded.entered_from,
         left_version = excluded.left_version, cover_version = excluded.cover_version`,
    )
    .run(tenant, orderId, status, evidence.seenVersion, evidence.enteredFrom, evidence.leftVersion, evidence.coverVersion);
}

function writeHistory(database: Database, tenant: string, orderId: string, history: OrderHistory, changed: Iterable<string>): void {
  database
    .prepare(
      `INSERT INTO inbox_orders (tenant, order_id, status, status_ts, status_at, last_event_at, has_created, version, created_cover) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, order_id) DO UPDATE SET status = excluded.status, status_ts = excluded.status_ts, status_at = excluded.status_at,
         last_event_at = excluded.last_event_at, has_created = excluded.has_created, version = excluded.version, created_cover = excluded.created_cover`,
    )
    .run(tenant, orderId, history.status, history.statusTs, history.statusRank, history.lastEventAt, history.hasCreated ? 1 : 0, history.version, history.createdCover ? 1 : 0);
  for (const status of changed) writeStatus(database, tenant, orderId, status, history.statuses.get(status)!);
}

/** When `secret` first verified an order event of `tenant` (recorded now if this is the first). */
function firstVerifiedAt(database: Database, tenant: string, secret: string, receivedAt: number): number {
  const known = database.prepare('SELECT first_at FROM inbox_verifiers WHERE tenant = ? AND verified_by = ?').get(tenant, secret) as { first_at: number } | undefined;
  if (known) return Number(known.first_at);
  // In the insert's write transaction: no other writer can have recorded it meanwhile.
  database.prepare('INSERT INTO inbox_verifiers (tenant, verified_by, first_at) VALUES (?, ?, ?)').run(tenant, secret, receivedAt);
  return receivedAt;
}

/**
 * Copies (src/inbox/copies.ts): the unpaired entry nearest in time of the same tenant, order and
 * change, verified by another secret since the two could both deliver, and not shown by the new
 * entry's own secret to be an earlier occurrence; if there is one, the new entry (just inserted) is
 * stored as its copy, `done`. Whether it was.
 */
function storedAsCopy(database: Database, entry: NewInboxEntry & { orderId: string }): boolean {
  const pairKey = pairKeyOf(entry);
  if (pairKey === null) return false;
  const tenant = storedTenant(entry.tenant);
  const after = entry.pairAfter ?? pairAfterOf(firstVerifiedAt(database, tenant, entry.verifiedBy!, entry.receivedAt), entry.receivedAt);
  const original = database
    .prepare(
      `SELECT o.delivery_id FROM inbox_entries o
       WHERE o.order_id = :order AND o.tenant = :tenant AND o.pair_key = :key AND o.verified_by <> :secret AND o.copy_of IS NULL AND o.copied_by IS NULL
         AND o.received_at >= :after AND NOT (o.delivery_id = :id AND o.tenant = :tenant)
         AND (:came IS NULL OR NOT EXISTS (
           SELECT 1 FROM inbox_entries m
           WHERE m.order_id = o.order_id AND m.tenant = o.tenant AND m.verified_by = :secret AND m.seq > o.seq AND m.copy_of IS NULL AND m.copied_by IS NULL
             AND NOT (m.delivery_id = :id AND m.tenant = :tenant)
             AND (CASE WHEN m.event = 'order.status_changed' AND json_valid(m.pair_key) THEN json_extract(m.pair_key, '$[2]') END) = :came))
       ORDER BY o.seq DESC LIMIT 1`,
    )
    .get({
      order: entry.orderId,
      tenant,
      key: pairKey,
      secret: entry.verifiedBy!,
      after,
      id: entry.deliveryId,
      came: entry.event === 'order.status_changed' ? statusesOf(entry.payload).previousStatus : null,
    }) as { delivery_id: string } | undefined;
  if (!original) return false;
  database.prepare(`UPDATE inbox_entries SET copied_by = ? WHERE delivery_id = ? AND tenant = ?`).run(entry.deliveryId, original.delivery_id, tenant);
  database
    .prepare(`UPDATE inbox_entries SET status = 'done', finished_at = ?, copy_of = ? WHERE delivery_id = ? AND tenant = ?`)
    .run(entry.receivedAt, original.delivery_id, entry.deliveryId, tenant);
  return true;
}

/**
 * Runs the insert of an entry; for an order event, in one transaction with the order's state and
 * history. A covered event (see src/inbox/order-history.ts) is stored `done`, never run, and
 * counts as a duplicate.
 */
export function insertOrderEvent(database: Database, entry: NewInboxEntry, insert: () => 'stored' | 'duplicate'): 'stored' | 'duplicate' {
  if (!tracksOrder(entry)) return insert();
  return sqliteTransaction(database, () => {
    if (insert() === 'duplicate') return 'duplicate';
    // A copy is the same event again: it neither runs nor tells the order anything new.
    if (storedAsCopy(database, entry)) return 'duplicate';
    const tenant = storedTenant(entry.tenant);
    const { previousStatus } = statusesOf(entry.payload);
    const { history, covered, changed } = applyOrderEvent(historyOf(database, tenant, entry.orderId), {
      event: entry.event,
      status: orderStatusOf(entry),
      previousStatus,
      ts: entry.ts,
      receivedAt: entry.receivedAt,
      reconcile: entry.source === 'reconcile',
      basedOnVersion: entry.orderVersion,
    });
    writeHistory(database, tenant, entry.orderId, history, changed);
    if (!covered) return 'stored';
    database.prepare(`UPDATE inbox_entries SET status = 'done', finished_at = ? WHERE delivery_id = ? AND tenant = ?`).run(entry.receivedAt, entry.deliveryId, tenant);
    return 'duplicate';
  });
}

/**
 * Creates what the rules keep; a database an earlier version wrote gets each order's history by
 * replaying the order events it holds (the state's status, backfilled before, is kept).
 */
export function migrateOrderHistory(database: Database): void {
  if (database.prepare(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'inbox_order_statuses'`).get()) return;
  sqliteTransaction(database, () => {
    addSqliteColumn(database, 'inbox_orders', 'version', 'INTEGER NOT NULL DEFAULT 0');
    addSqliteColumn(database, 'inbox_orders', 'created_cover', 'INTEGER NOT NULL DEFAULT 0');
    database.exec(STATUSES_SCHEMA);
    const rows = database
      .prepare(`SELECT order_id, event, ts, received_at, payload FROM inbox_entries WHERE order_id IS NOT NULL AND event IN ('order.created', 'order.status_changed') ORDER BY seq`)
      .all() as { order_id: string; event: string; ts: number; received_at: number; payload: string | null }[];
    for (const [orderId, history] of replayHistories(rows)) {
      database.prepare('UPDATE inbox_orders SET version = ?, created_cover = ? WHERE order_id = ?').run(history.version, history.createdCover ? 1 : 0, orderId);
      for (const [status, evidence] of history.statuses) writeStatus(database, '', orderId, status, evidence);
    }
  });
}

/**
 * The first time each secret verified an order event (what pairs a single merchant's copies),
 * created with what the entries of a database an earlier version wrote show.
 */
export function migrateCopies(database: Database): void {
  if (database.prepare(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'inbox_verifiers'`).get()) return;
  sqliteTransaction(database, () => {
    database.exec('CREATE TABLE inbox_verifiers (tenant TEXT NOT NULL, verified_by TEXT NOT NULL, first_at INTEGER NOT NULL, PRIMARY KEY (tenant, verified_by))');
    database.exec(`INSERT INTO inbox_verifiers (tenant, verified_by, first_at)
      SELECT tenant, verified_by, MIN(received_at) FROM inbox_entries WHERE verified_by IS NOT NULL AND pair_key IS NOT NULL GROUP BY tenant, verified_by`);
  });
}

/**
 * `markChecked`: each order read back at `now`; the status read is recorded as the order's when it
 * knew none, or when nothing was stored for the order since the state the read was made from
 * (`version`): what the service said is then the newest word on it.
 */
export function recordChecks(database: Database, checks: readonly { orderId: string; status?: string; version?: number }[], now: number, tenant: string): void {
  sqliteTransaction(database, () => {
    for (const check of checks) {
      if (check.status !== undefined && check.version !== undefined) {
        const read = recordRead(historyOf(database, tenant, check.orderId), check.status, check.version);
        if (read) writeHistory(database, tenant, check.orderId, read.history, read.changed);
      }
    }
    const update = database.prepare(`UPDATE inbox_orders SET checked_at = ?, status = COALESCE(status, ?) WHERE tenant = ? AND order_id = ?`);
    for (const check of checks) update.run(now, check.status ?? null, tenant, check.orderId);
  });
}
