// The inbox tables as the version before many merchants (issue 28) left them, with a few rows: an
// order whose order.created ran and whose 'dispatched' a reconcile brought (no real delivery of it
// yet), a pending entry, and an open missed delivery. Both stores' migration tests start from these.

export const OLD_SQLITE_SCHEMA = `
CREATE TABLE inbox_entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, order_id TEXT, ts INTEGER NOT NULL, payload TEXT,
  known INTEGER NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, received_at INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL, lease_owner TEXT, lease_until INTEGER, finished_at INTEGER, schema_issues TEXT, display_number TEXT, external_order_id TEXT);
CREATE INDEX inbox_entries_runnable ON inbox_entries (status, next_attempt_at);
CREATE INDEX inbox_entries_leased ON inbox_entries (status, lease_until);
CREATE INDEX inbox_entries_order ON inbox_entries (order_id, ts, seq);
CREATE INDEX inbox_entries_finished ON inbox_entries (status, finished_at);
CREATE INDEX inbox_entries_invalid ON inbox_entries (seq) WHERE schema_issues IS NOT NULL;
CREATE TABLE inbox_orders (
  order_id TEXT PRIMARY KEY, status TEXT, status_ts INTEGER NOT NULL DEFAULT 0, status_at INTEGER NOT NULL DEFAULT 0, last_event_at INTEGER NOT NULL,
  checked_at INTEGER, has_created INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 0, created_cover INTEGER NOT NULL DEFAULT 0);
CREATE TABLE inbox_reconcile_runs (id INTEGER PRIMARY KEY CHECK (id = 1), ran_at INTEGER NOT NULL, missed TEXT NOT NULL, endpoint_ids TEXT);
CREATE TABLE inbox_order_statuses (
  order_id TEXT NOT NULL, status TEXT NOT NULL, seen_version INTEGER, entered_from TEXT, left_version INTEGER, cover_version INTEGER,
  PRIMARY KEY (order_id, status));
CREATE TABLE inbox_missed (
  delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL, status TEXT NOT NULL, endpoint_id TEXT NOT NULL, last_error TEXT, created_at TEXT NOT NULL,
  attempt_count INTEGER NOT NULL, gives_up_at TEXT, first_seen_at INTEGER NOT NULL, ended TEXT, ended_at INTEGER, ended_by TEXT);
CREATE INDEX inbox_missed_open ON inbox_missed (created_at, delivery_id) WHERE ended IS NULL;
CREATE INDEX inbox_missed_ended ON inbox_missed (ended_at) WHERE ended IS NOT NULL;
CREATE INDEX inbox_entries_received ON inbox_entries (received_at, delivery_id);
CREATE INDEX inbox_entries_status_received ON inbox_entries (status, received_at, delivery_id);
CREATE INDEX inbox_entries_rare_event_received ON inbox_entries (event, received_at, delivery_id) WHERE event NOT IN ('order.created', 'order.status_changed');
CREATE INDEX inbox_entries_display_number ON inbox_entries (display_number) WHERE display_number IS NOT NULL;
CREATE INDEX inbox_entries_external_order ON inbox_entries (external_order_id) WHERE external_order_id IS NOT NULL;
CREATE TABLE inbox_workers (worker_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL, claimed_at INTEGER);
CREATE TABLE inbox_actions (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE inbox_purged_activity (hour_start INTEGER PRIMARY KEY, received INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, dead INTEGER NOT NULL DEFAULT 0);
`;

export const T0 = 1_800_000_000_000;
const created = JSON.stringify({ event: 'order.created', data: { order_id: 'o-1', status: 'confirmed', display_number: '101' } });
const reconciled = JSON.stringify({ event: 'order.status_changed', source: 'reconcile', data: { order_id: 'o-1', previous_status: 'confirmed', status: 'dispatched' } });
const other = JSON.stringify({ event: 'order.created', data: { order_id: 'o-2', status: 'confirmed' } });

/** Rows as `INSERT` statements in the old tables' columns (portable SQL: both stores run them). */
export const OLD_ROWS = [
  `INSERT INTO inbox_entries (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at, finished_at, display_number)
   VALUES ('e-1', 'order.created', 'o-1', 100, '${created}', TRUE, 'done', ${T0}, ${T0}, ${T0 + 1}, '101')`,
  `INSERT INTO inbox_entries (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at, finished_at)
   VALUES ('r-1', 'order.status_changed', 'o-1', 200, '${reconciled}', TRUE, 'done', ${T0 + 10}, ${T0 + 10}, ${T0 + 11})`,
  `INSERT INTO inbox_entries (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at)
   VALUES ('e-2', 'order.created', 'o-2', 100, '${other}', TRUE, 'pending', ${T0 + 20}, ${T0 + 20})`,
  `INSERT INTO inbox_orders (order_id, status, status_ts, status_at, last_event_at, has_created, version) VALUES ('o-1', 'dispatched', 200, 9007199254740991, ${T0 + 10}, TRUE, 2)`,
  `INSERT INTO inbox_orders (order_id, status, status_ts, last_event_at, has_created, version) VALUES ('o-2', 'confirmed', 0, ${T0 + 20}, TRUE, 1)`,
  `INSERT INTO inbox_order_statuses (order_id, status, seen_version, left_version, cover_version) VALUES ('o-1', 'dispatched', 2, NULL, 2)`,
  `INSERT INTO inbox_order_statuses (order_id, status, left_version) VALUES ('o-1', 'confirmed', 2)`,
  `INSERT INTO inbox_missed (delivery_id, event, status, endpoint_id, created_at, attempt_count, first_seen_at) VALUES ('m-1', 'order.created', 'dead', 'ep-1', '2026-11-21T12:00:00.000Z', 6, ${T0})`,
  `INSERT INTO inbox_reconcile_runs (id, ran_at, missed, endpoint_ids) VALUES (1, ${T0 + 30}, '[]', '["ep-1"]')`,
];

/** The real delivery of the change the reconcile brought: covered (done, never run) after the migration too. */
export const LATE_DISPATCHED = {
  deliveryId: 'e-3',
  event: 'order.status_changed',
  orderId: 'o-1',
  ts: 300,
  payload: JSON.stringify({ event: 'order.status_changed', data: { order_id: 'o-1', previous_status: 'confirmed', status: 'dispatched' } }),
  known: true,
  receivedAt: T0 + 40,
};

/** The same tables on Postgres, in `schema`, as the version before tenants made them. */
export const oldPostgresSchema = (schema: string): string[] => [
  `CREATE SCHEMA "${schema}"`,
  `CREATE TABLE "${schema}".inbox_entries (
    seq BIGSERIAL PRIMARY KEY, delivery_id TEXT NOT NULL, event TEXT NOT NULL, order_id TEXT, ts DOUBLE PRECISION NOT NULL, payload TEXT,
    known BOOLEAN NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, received_at BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL, lease_owner TEXT, lease_until BIGINT, finished_at BIGINT, schema_issues TEXT, display_number TEXT, external_order_id TEXT)`,
  `CREATE INDEX inbox_entries_pending ON "${schema}".inbox_entries (next_attempt_at, seq) WHERE status = 'pending'`,
  `CREATE INDEX inbox_entries_processing ON "${schema}".inbox_entries (lease_until, seq) WHERE status = 'processing'`,
  `CREATE UNIQUE INDEX inbox_entries_delivery_key ON "${schema}".inbox_entries (md5(delivery_id))`,
  `CREATE INDEX inbox_entries_delivery_hash ON "${schema}".inbox_entries USING hash (delivery_id)`,
  `CREATE INDEX inbox_entries_order_hash ON "${schema}".inbox_entries USING hash (order_id)`,
  `CREATE TABLE "${schema}".inbox_orders (
    order_id TEXT PRIMARY KEY, status TEXT, status_ts DOUBLE PRECISION NOT NULL DEFAULT 0, status_at BIGINT NOT NULL DEFAULT 0, last_event_at BIGINT NOT NULL,
    checked_at BIGINT, has_created BOOLEAN NOT NULL DEFAULT FALSE, version BIGINT NOT NULL DEFAULT 0, created_cover BOOLEAN NOT NULL DEFAULT FALSE)`,
  `CREATE TABLE "${schema}".inbox_reconcile_runs (id INTEGER PRIMARY KEY CHECK (id = 1), ran_at BIGINT NOT NULL, missed TEXT NOT NULL, endpoint_ids TEXT)`,
  `CREATE TABLE "${schema}".inbox_order_statuses (
    order_id TEXT NOT NULL, status TEXT NOT NULL, seen_version BIGINT, entered_from TEXT, left_version BIGINT, cover_version BIGINT, PRIMARY KEY (order_id, status))`,
  `CREATE TABLE "${schema}".inbox_missed (
    delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL, status TEXT NOT NULL, endpoint_id TEXT NOT NULL, last_error TEXT, created_at TEXT NOT NULL,
    attempt_count INTEGER NOT NULL, gives_up_at TEXT, first_seen_at BIGINT NOT NULL, ended TEXT, ended_at BIGINT, ended_by TEXT)`,
  `CREATE TABLE "${schema}".inbox_purged_activity (hour_start BIGINT PRIMARY KEY, received BIGINT NOT NULL DEFAULT 0, done BIGINT NOT NULL DEFAULT 0, dead BIGINT NOT NULL DEFAULT 0)`,
];
