/**
 * The Postgres side of "a status handled once" (src/inbox/order-history.ts): a trigger on the
 * entries table keeps, inside the INSERT that stores an order event (no round trip more for the
 * receiver) and under a per-order advisory lock, the order's state and what it has had, and marks
 * an event that repeats a change the other way already brought as `done`. It is the same rules as
 * `applyOrderEvent`, in PL/pgSQL; the shared conformance suite holds both stores to them.
 */
import type { PoolClient } from 'pg';
import { recordRead, replayHistories, RECONCILE_RANK, type OrderHistory, type StatusEvidence, type StoredOrderEvent } from '../order-history.ts';
import { PAIR_SLACK_MS, PAIR_WINDOW_MS } from '../copies.ts';

/** The tables the trigger reads and writes, schema-qualified and quoted. */
export interface OrderHistoryTables {
  schema: string;
  entries: string;
  orders: string;
  statuses: string;
  /** When each secret first verified an order event (a single merchant's copies are paired from then). */
  verifiers: string;
}

/** Every order event the entries table holds, oldest first, a page at a time (for migrations). */
export async function storedOrderEvents(client: PoolClient, entries: string): Promise<StoredOrderEvent[]> {
  const rows: StoredOrderEvent[] = [];
  let after = '0';
  for (;;) {
    const page = (
      await client.query<StoredOrderEvent & { seq: string }>(
        `SELECT seq, order_id, event, ts, received_at, payload FROM ${entries}
         WHERE seq > $1 AND order_id IS NOT NULL AND event IN ('order.created', 'order.status_changed') ORDER BY seq LIMIT 1000`,
        [after],
      )
    ).rows;
    rows.push(...page);
    if (page.length < 1000) return rows;
    after = page[page.length - 1]!.seq;
  }
}

/**
 * Issue 28: orders, and what they have had, are per tenant. Tables an earlier version made get a
 * `tenant` column (their rows: `''`, a single merchant's) and keys that begin with it. Each only
 * when needed: ALTER TABLE takes the table's strongest lock even when there is nothing to change.
 */
export async function migrateOrderTenants(client: PoolClient, { schema, orders, statuses }: OrderHistoryTables): Promise<void> {
  const { rows } = await client.query<{ table_name: string }>(
    `SELECT c.relname AS table_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname IN ('inbox_orders', 'inbox_order_statuses')
       AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped)`,
    [schema],
  );
  for (const { table_name: name } of rows) {
    const qualified = name === 'inbox_orders' ? orders : statuses;
    const key = name === 'inbox_orders' ? '(tenant, order_id)' : '(tenant, order_id, status)';
    const [primary] = (await client.query<{ conname: string }>(`SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`, [qualified])).rows;
    await client.query(
      `ALTER TABLE ${qualified} ADD COLUMN tenant TEXT NOT NULL DEFAULT ''${primary ? `, DROP CONSTRAINT "${primary.conname}"` : ''}, ADD PRIMARY KEY ${key}`,
    );
  }
}

/**
 * Adds the order's version and pending reconciled `order.created` to the orders table and creates
 * the per-status table; a database an earlier version wrote gets each order's history by replaying
 * its stored order events. Then (re)creates the trigger.
 */
export async function migrateOrderHistory(client: PoolClient, tables: OrderHistoryTables): Promise<void> {
  const { orders, statuses } = tables;
  const [existing] = (await client.query<{ found: string | null }>(`SELECT to_regclass($1) AS found`, [statuses])).rows;
  if (!existing?.found) {
    // ALTER TABLE takes the table's strongest lock even when there is nothing to add: only once.
    await client.query(`ALTER TABLE ${orders} ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS created_cover BOOLEAN NOT NULL DEFAULT FALSE`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${statuses} (
        tenant TEXT NOT NULL DEFAULT '',
        order_id TEXT NOT NULL,
        status TEXT NOT NULL,
        seen_version BIGINT,
        entered_from TEXT,
        left_version BIGINT,
        cover_version BIGINT,
        PRIMARY KEY (tenant, order_id, status)
      )`);
    for (const [orderId, history] of replayHistories(await storedOrderEvents(client, tables.entries))) {
      await client.query(`UPDATE ${orders} SET version = $2, created_cover = $3 WHERE tenant = '' AND order_id = $1`, [orderId, history.version, history.createdCover]);
      for (const [status, evidence] of history.statuses) {
        await client.query(`INSERT INTO ${statuses} (order_id, status, seen_version, entered_from, left_version, cover_version) VALUES ($1, $2, $3, $4, $5, $6)`, [
          orderId,
          status,
          evidence.seenVersion,
          evidence.enteredFrom,
          evidence.leftVersion,
          evidence.coverVersion,
        ]);
      }
    }
  }
  await migrateCopies(client, tables);
  await createOrderStateTrigger(client, tables);
}

/**
 * The first time each secret verified an order event (what pairs a single merchant's copies),
 * created with what the entries of a database an earlier version wrote show.
 */
async function migrateCopies(client: PoolClient, { entries, verifiers }: OrderHistoryTables): Promise<void> {
  const [existing] = (await client.query<{ found: string | null }>(`SELECT to_regclass($1) AS found`, [verifiers])).rows;
  if (existing?.found) return;
  await client.query(`CREATE TABLE IF NOT EXISTS ${verifiers} (tenant TEXT NOT NULL, verified_by TEXT NOT NULL, first_at BIGINT NOT NULL, PRIMARY KEY (tenant, verified_by))`);
  await client.query(`INSERT INTO ${verifiers} (tenant, verified_by, first_at)
    SELECT tenant, verified_by, MIN(received_at) FROM ${entries} WHERE verified_by IS NOT NULL AND pair_key IS NOT NULL GROUP BY tenant, verified_by
    ON CONFLICT (tenant, verified_by) DO NOTHING`);
}

/**
 * `markChecked`'s record of the status a reconcile read, for one order: under the order's lock (the
 * trigger's), when nothing was stored for it since the state of `version` (see `recordRead`).
 */
export async function recordReadStatus(client: PoolClient, { schema, orders, statuses }: OrderHistoryTables, tenant: string, orderId: string, status: string, version: number): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`${schema}:${tenant}:${orderId}`]);
  const [order] = (await client.query<{ status: string | null; version: string }>(`SELECT status, version FROM ${orders} WHERE tenant = $1 AND order_id = $2`, [tenant, orderId])).rows;
  if (!order || Number(order.version) !== version || order.status === status) return;
  const rows = (await client.query<{ status: string; seen_version: string | null; entered_from: string | null; left_version: string | null; cover_version: string | null }>(
    `SELECT status, seen_version, entered_from, left_version, cover_version FROM ${statuses} WHERE tenant = $1 AND order_id = $2 AND status = ANY($3::text[])`,
    [tenant, orderId, [status, ...(order.status === null ? [] : [order.status])]],
  )).rows;
  const asNumber = (value: string | null) => (value === null ? null : Number(value));
  const before: OrderHistory = {
    version, status: order.status, statusTs: 0, statusRank: 0, lastEventAt: 0, hasCreated: false, createdCover: false,
    statuses: new Map(rows.map((row) => [row.status, { seenVersion: asNumber(row.seen_version), enteredFrom: row.entered_from, leftVersion: asNumber(row.left_version), coverVersion: asNumber(row.cover_version) }])),
  };
  const read = recordRead(before, status, version);
  if (!read) return;
  await client.query(`UPDATE ${orders} SET status = $3, status_at = $4 WHERE tenant = $1 AND order_id = $2`, [tenant, orderId, status, RECONCILE_RANK]);
  for (const name of read.changed) {
    const evidence: StatusEvidence = read.history.statuses.get(name)!;
    await client.query(
      `INSERT INTO ${statuses} (tenant, order_id, status, seen_version, entered_from, left_version, cover_version) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (tenant, order_id, status) DO UPDATE SET seen_version = EXCLUDED.seen_version, entered_from = EXCLUDED.entered_from,
         left_version = EXCLUDED.left_version, cover_version = EXCLUDED.cover_version`,
      [tenant, orderId, name, evidence.seenVersion, evidence.enteredFrom, evidence.leftVersion, evidence.coverVersion],
    );
  }
}

async function createOrderStateTrigger(client: PoolClient, { schema, entries, orders, statuses, verifiers }: OrderHistoryTables): Promise<void> {
  const [version] = (await client.query<{ n: string }>(`SELECT current_setting('server_version_num') AS n`)).rows;
  const read = `IF jsonb_typeof(doc -> 'data' -> 'status') = 'string' THEN new_status := doc -> 'data' ->> 'status'; END IF;
        IF jsonb_typeof(doc -> 'data' -> 'previous_status') = 'string' THEN prev_status := doc -> 'data' ->> 'previous_status'; END IF;`;
  // pg_input_is_valid (Postgres 16) spares a subtransaction per event; before it, a malformed payload is caught.
  const readStatuses =
    Number(version?.n) >= 160000
      ? `IF NEW.payload IS NOT NULL AND pg_input_is_valid(NEW.payload, 'jsonb') THEN doc := NEW.payload::jsonb; ${read} END IF;`
      : `BEGIN doc := NEW.payload::jsonb; ${read} EXCEPTION WHEN others THEN new_status := NULL; prev_status := NULL; END;`;
  // The order's rows: of this tenant.
  const order = `tenant = NEW.tenant AND order_id = NEW.order_id`;
  // Marks `status` left at this version (the order moved on from it).
  const leave = (status: string) =>
    `INSERT INTO ${statuses} (tenant, order_id, status, left_version) VALUES (NEW.tenant, NEW.order_id, ${status}, v)
       ON CONFLICT (tenant, order_id, status) DO UPDATE SET left_version = EXCLUDED.left_version;`;
  const moveTo = `IF o.status IS NOT NULL AND o.status <> new_status THEN ${leave('o.status')} END IF;
          o.status := new_status; o.status_ts := NEW.ts; o.status_at := rank;`;
  await client.query(`
    CREATE OR REPLACE FUNCTION "${schema}".inbox_order_state() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      doc jsonb;
      new_status text;
      prev_status text;
      reconciling boolean := coalesce(current_setting('integration_inbox.source', true), '') = 'reconcile';
      based_on bigint := nullif(coalesce(current_setting('integration_inbox.order_version', true), ''), '')::bigint;
      rank bigint := CASE WHEN reconciling THEN ${RECONCILE_RANK} ELSE NEW.received_at END;
      o ${orders}%ROWTYPE;
      s ${statuses}%ROWTYPE;
      f ${statuses}%ROWTYPE;
      original ${entries}%ROWTYPE;
      first_verified bigint;
      came_from text;
      v bigint;
      covered boolean := false;
      in_status boolean;
      older boolean;
      takes boolean;
    BEGIN
      -- An order id no real order has (over 1000 bytes) keeps no state: a btree key holds ~2.7 KB at most.
      IF NEW.order_id IS NULL OR octet_length(NEW.order_id) > 1000 OR NEW.event NOT IN ('order.created', 'order.status_changed') THEN RETURN NULL; END IF;
      PERFORM pg_advisory_xact_lock(hashtext('${schema}:' || NEW.tenant || ':' || NEW.order_id));

      -- A copy across two secrets (src/inbox/copies.ts): the unpaired entry nearest in time of the
      -- same change verified by another secret since both could deliver (pair_after; else from when
      -- this secret first verified an order event), unless this secret's own entries show it an
      -- earlier occurrence (the order came back into this change's previous status through this
      -- secret alone since). The copy is stored done and tells the order nothing new.
      IF NEW.pair_key IS NOT NULL THEN
        IF NEW.pair_after IS NULL THEN
          -- Read first: the secret's row is there for every delivery but its first.
          SELECT first_at INTO first_verified FROM ${verifiers} WHERE tenant = NEW.tenant AND verified_by = NEW.verified_by;
          IF NOT FOUND THEN
            INSERT INTO ${verifiers} (tenant, verified_by, first_at) VALUES (NEW.tenant, NEW.verified_by, NEW.received_at) ON CONFLICT (tenant, verified_by) DO NOTHING;
            SELECT first_at INTO first_verified FROM ${verifiers} WHERE tenant = NEW.tenant AND verified_by = NEW.verified_by;
          END IF;
        END IF;
        IF NEW.event = 'order.status_changed' THEN came_from := NEW.pair_key::jsonb ->> 1; END IF;
        SELECT * INTO original FROM ${entries} candidate
          WHERE candidate.tenant = NEW.tenant AND candidate.order_id = NEW.order_id AND candidate.pair_key = NEW.pair_key AND candidate.verified_by <> NEW.verified_by
            AND candidate.copy_of IS NULL AND candidate.copied_by IS NULL AND candidate.seq <> NEW.seq
            AND candidate.received_at >= coalesce(NEW.pair_after, greatest(NEW.received_at - ${PAIR_WINDOW_MS}, first_verified - ${PAIR_SLACK_MS}))
            AND (came_from IS NULL OR NOT EXISTS (
              SELECT 1 FROM ${entries} own
              WHERE own.tenant = NEW.tenant AND own.order_id = NEW.order_id AND own.verified_by = NEW.verified_by AND own.seq > candidate.seq AND own.seq <> NEW.seq
                AND own.copy_of IS NULL AND own.copied_by IS NULL
                AND (CASE WHEN own.event = 'order.status_changed' AND own.pair_key IS NOT NULL THEN own.pair_key::jsonb ->> 2 END) = came_from))
          ORDER BY candidate.seq DESC LIMIT 1;
        IF FOUND THEN
          UPDATE ${entries} SET copied_by = NEW.delivery_id WHERE seq = original.seq;
          UPDATE ${entries} SET status = 'done', finished_at = NEW.received_at, copy_of = original.delivery_id WHERE seq = NEW.seq;
          RETURN NULL;
        END IF;
      END IF;

      ${readStatuses}
      IF prev_status = new_status THEN prev_status := NULL; END IF;
      INSERT INTO ${orders} (tenant, order_id, last_event_at) VALUES (NEW.tenant, NEW.order_id, NEW.received_at) ON CONFLICT (tenant, order_id) DO NOTHING;
      SELECT * INTO o FROM ${orders} WHERE ${order};
      v := o.version + 1;
      o.version := v;
      o.last_event_at := greatest(o.last_event_at, NEW.received_at);

      IF NEW.event = 'order.created' THEN
        IF reconciling THEN
          covered := o.has_created;
          IF NOT covered THEN o.created_cover := true; END IF;
        ELSE
          covered := o.created_cover;
          o.created_cover := false;
        END IF;
        o.has_created := true;
        -- An order.created's status counts only while no status is known.
        IF o.status IS NULL AND new_status IS NOT NULL THEN o.status := new_status; o.status_ts := 0; o.status_at := 0; END IF;
      ELSIF new_status IS NOT NULL THEN
        SELECT * INTO s FROM ${statuses} WHERE ${order} AND status = new_status;
        SELECT * INTO f FROM ${statuses} WHERE ${order} AND status = prev_status;
        -- In that status already: the state, or entered and not left since.
        in_status := o.status IS NOT DISTINCT FROM new_status
          OR (s.seen_version IS NOT NULL AND NOT (s.left_version IS NOT NULL AND s.left_version >= s.seen_version));
        -- Known to be older: its status, or the one it came from, was left already.
        older := coalesce(s.left_version IS NOT NULL AND (s.seen_version IS NULL OR s.left_version >= s.seen_version), false)
          OR coalesce(prev_status IS NOT NULL AND f.left_version IS NOT NULL AND (f.seen_version IS NULL OR f.left_version >= f.seen_version), false);
        -- A real change becomes the state (its ts plays no part: a retry carries its attempt's time)
        -- when it follows on from the current status; not when it is known to be older; else when it
        -- arrived later than what brought the state (a status a reconcile read ranks above every delivery).
        takes := o.status IS NULL OR (new_status IS DISTINCT FROM o.status AND (
          (prev_status IS NOT NULL AND prev_status = o.status)
          OR (NOT older AND NEW.received_at >= o.status_at)));
        IF reconciling THEN
          covered := in_status OR (based_on IS NOT NULL AND coalesce(s.left_version > based_on, false));
          IF covered THEN
            IF in_status AND o.status IS DISTINCT FROM new_status THEN ${moveTo} END IF;
          ELSE
            INSERT INTO ${statuses} (tenant, order_id, status, seen_version, cover_version) VALUES (NEW.tenant, NEW.order_id, new_status, v, v)
              ON CONFLICT (tenant, order_id, status) DO UPDATE SET seen_version = EXCLUDED.seen_version, cover_version = EXCLUDED.cover_version;
            IF prev_status IS NOT NULL THEN ${leave('prev_status')} END IF;
            -- What the service said when it was read is where the order is.
            ${moveTo}
          END IF;
        ELSE
          -- Covered unless it follows on from where the order is: it went on from the reconciled status and came back.
          covered := s.cover_version IS NOT NULL AND (prev_status IS NULL OR prev_status IS DISTINCT FROM o.status);
          INSERT INTO ${statuses} AS x (tenant, order_id, status, seen_version, entered_from) VALUES (NEW.tenant, NEW.order_id, new_status, v, prev_status)
            ON CONFLICT (tenant, order_id, status) DO UPDATE SET seen_version = EXCLUDED.seen_version, entered_from = EXCLUDED.entered_from,
              cover_version = CASE WHEN covered THEN NULL ELSE x.cover_version END;
          IF prev_status IS NOT NULL THEN ${leave('prev_status')} END IF;
          IF takes THEN ${moveTo}
          ELSIF o.status = new_status THEN o.status_ts := greatest(o.status_ts, NEW.ts);
          -- Known to be older: the order is already past its status. (One the state does not take only
          -- because a reconcile read ranks above it may be newer: seen, not left.)
          ELSIF older THEN ${leave('new_status')} END IF;
        END IF;
      END IF;

      UPDATE ${orders} SET status = o.status, status_ts = o.status_ts, status_at = o.status_at, last_event_at = o.last_event_at,
        has_created = o.has_created, version = o.version, created_cover = o.created_cover
      WHERE ${order};
      IF covered THEN UPDATE ${entries} SET status = 'done', finished_at = NEW.received_at WHERE seq = NEW.seq; END IF;
      RETURN NULL;
    END
    $fn$`);
  // Created once: CREATE TRIGGER locks the table against every writer while it runs.
  const [exists] = (await client.query(`SELECT 1 AS found FROM pg_trigger WHERE tgname = 'inbox_entries_order_state' AND tgrelid = $1::regclass`, [entries])).rows;
  if (!exists) await client.query(`CREATE TRIGGER inbox_entries_order_state AFTER INSERT ON ${entries} FOR EACH ROW EXECUTE PROCEDURE "${schema}".inbox_order_state()`);
}
