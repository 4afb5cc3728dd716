/**
 * The SQLite side of `missed`: the last reconcile's record and each missed delivery from the
 * reconcile that first found it until it arrives, is acknowledged (who, when) or is recovered.
 */
import { addSqliteColumn, sqliteTransaction, type SqliteDatabase as Database } from '../../storage/sqlite.ts';
import { missedFromRow, type InboxStore, type MissedDelivery, type MissedRow, type ReconcileRecord } from '../store.ts';

const MISSED_SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox_missed (
  delivery_id TEXT PRIMARY KEY,
  event TEXT NOT NULL,
  status TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  last_error TEXT,
  created_at TEXT NOT NULL,
  attempt_count INTEGER NOT NULL,
  gives_up_at TEXT,
  first_seen_at INTEGER NOT NULL,
  ended TEXT,
  ended_at INTEGER,
  ended_by TEXT,
  tenant TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS inbox_missed_open ON inbox_missed (created_at, delivery_id) WHERE ended IS NULL;
CREATE INDEX IF NOT EXISTS inbox_missed_ended ON inbox_missed (ended_at) WHERE ended IS NOT NULL;
`;

const COLUMNS = 'delivery_id, event, status, endpoint_id, last_error, created_at, attempt_count, gives_up_at, first_seen_at, ended, ended_at, ended_by';

/**
 * Creates the missed table; a database an earlier version wrote keeps the misses its last reconcile
 * listed, open from when that reconcile ran.
 */
export function migrateMissed(database: Database): void {
  if (database.prepare(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'inbox_missed'`).get()) return;
  sqliteTransaction(database, () => {
    addSqliteColumn(database, 'inbox_reconcile_runs', 'endpoint_ids', 'TEXT');
    database.exec(MISSED_SCHEMA);
    const last = database.prepare('SELECT ran_at, missed FROM inbox_reconcile_runs WHERE id = 1').get() as { ran_at: number; missed: string } | undefined;
    if (last) insertMissed(database, JSON.parse(last.missed) as ReconcileRecord['missed'], Number(last.ran_at));
  });
}

function insertMissed(database: Database, missed: readonly MissedDelivery[], now: number, tenant = ''): string[] {
  const known = database.prepare('SELECT 1 AS found FROM inbox_missed WHERE delivery_id = ?');
  const insert = database.prepare(`INSERT INTO inbox_missed (${COLUMNS}, tenant) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?)`);
  const update = database.prepare('UPDATE inbox_missed SET status = ?, last_error = ?, attempt_count = ?, gives_up_at = ? WHERE delivery_id = ?');
  const added: string[] = [];
  for (const each of missed) {
    if (known.get(each.deliveryId)) {
      update.run(each.status, each.lastError, each.attemptCount, each.givesUpAt, each.deliveryId);
    } else {
      insert.run(each.deliveryId, each.event, each.status, each.endpointId, each.lastError, each.createdAt, each.attemptCount, each.givesUpAt, now, tenant);
      added.push(each.deliveryId);
    }
  }
  return added;
}

type Run = <T>(operation: (database: Database) => T) => Promise<T>;

/** The store's reconcile record and missed methods, run by `durable` (migrated, WAL synced at commit). */
export function sqliteMissedMethods(durable: Run): Required<Pick<InboxStore, 'saveReconcile' | 'lastReconcile' | 'reconciledAt' | 'recordMissed' | 'listMissed' | 'endMissed'>> {
  return {
    saveReconcile: (record) =>
      durable((database) => {
        if (record.tenant) {
          database
            .prepare(
              `INSERT INTO inbox_reconcile_tenants (tenant, ran_at, missed, endpoint_ids) VALUES (?, ?, ?, ?)
               ON CONFLICT (tenant) DO UPDATE SET ran_at = excluded.ran_at, missed = excluded.missed, endpoint_ids = excluded.endpoint_ids`,
            )
            .run(record.tenant, record.ranAt, JSON.stringify(record.missed), record.endpointIds === undefined ? null : JSON.stringify(record.endpointIds));
          return;
        }
        database
          .prepare(
            `INSERT INTO inbox_reconcile_runs (id, ran_at, missed, endpoint_ids) VALUES (1, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, missed = excluded.missed, endpoint_ids = excluded.endpoint_ids`,
          )
          .run(record.ranAt, JSON.stringify(record.missed), record.endpointIds === undefined ? null : JSON.stringify(record.endpointIds));
      }),

    lastReconcile: (tenant) =>
      durable((database) => {
        const row = (
          tenant
            ? database.prepare(`SELECT ran_at, missed, endpoint_ids FROM inbox_reconcile_tenants WHERE tenant = ?`).get(tenant)
            : database.prepare(`SELECT ran_at, missed, endpoint_ids FROM inbox_reconcile_runs WHERE id = 1`).get()
        ) as { ran_at: number; missed: string; endpoint_ids: string | null } | undefined;
        if (!row) return undefined;
        const record: ReconcileRecord = { ...(tenant ? { tenant } : {}), ranAt: Number(row.ran_at), missed: JSON.parse(row.missed) as ReconcileRecord['missed'] };
        return row.endpoint_ids === null ? record : { ...record, endpointIds: JSON.parse(row.endpoint_ids) as string[] };
      }),

    reconciledAt: (tenants) =>
      durable((database) => {
        const found = new Map<string, number>();
        const select = database.prepare('SELECT tenant, ran_at FROM inbox_reconcile_tenants WHERE tenant IN (SELECT value FROM json_each(?))');
        for (let start = 0; start < tenants.length; start += 500) {
          for (const row of select.all(JSON.stringify(tenants.slice(start, start + 500))) as { tenant: string; ran_at: number }[]) found.set(row.tenant, Number(row.ran_at));
        }
        return found;
      }),

    recordMissed: (missed, now, tenant) => durable((database) => sqliteTransaction(database, () => insertMissed(database, missed, now, tenant ?? ''))),

    listMissed: ({ open, limit, tenant }) =>
      durable((database) => {
        const filter = tenant === undefined ? '' : ' AND tenant = :tenant';
        const sql = open
          ? `SELECT ${COLUMNS}, tenant FROM inbox_missed WHERE ended IS NULL${filter} ORDER BY created_at, delivery_id LIMIT :limit`
          : `SELECT ${COLUMNS}, tenant FROM inbox_missed WHERE ended IS NOT NULL${filter} ORDER BY ended_at DESC, delivery_id LIMIT :limit`;
        return (database.prepare(sql).all({ limit, ...(tenant === undefined ? {} : { tenant }) }) as MissedRow[]).map(missedFromRow);
      }),

    endMissed: ({ deliveryIds, how, at, by, tenant }) =>
      durable((database) =>
        sqliteTransaction(database, () => {
          const mine = tenant === undefined ? '' : ' AND tenant = :tenant';
          const end = (where: string, named: Record<string, unknown>) =>
            (database
              .prepare(`UPDATE inbox_missed SET ended = :how, ended_at = :at, ended_by = :by WHERE ended IS NULL AND ${where}${mine} RETURNING delivery_id`)
              .all({ how, at, by, ...named, ...(tenant === undefined ? {} : { tenant }) }) as { delivery_id: string }[]).map((row) => row.delivery_id);
          if (deliveryIds === 'all') return end('1 = 1', {});
          return deliveryIds.flatMap((id) => end('delivery_id = :id', { id }));
        }),
      ),
  };
}
