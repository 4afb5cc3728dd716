// The writes of items on SQLite: one statement per window or batch (its rows as one JSON array),
// never one per item.
import type { SqliteDatabase } from '../../storage/sqlite.ts';
import { OVERWRITTEN, type AcknowledgedItem, type InFlightItem, type SeenMark, type StockPair, type SyncKind } from '../state.ts';

export function markSeen(db: SqliteDatabase, scope: string, kind: string, seq: number, marks: readonly SeenMark[]): void {
  db.prepare(
    `INSERT INTO sync_items (scope, kind, key, external_id, store_id, seen_seq, seen_index)
     SELECT ?, ?, value ->> 0, value ->> 1, value ->> 2, ?, value ->> 3 FROM json_each(?) WHERE true
     ON CONFLICT (scope, kind, key) DO UPDATE SET seen_seq = excluded.seen_seq, seen_index = excluded.seen_index`,
  ).run(scope, kind, seq, JSON.stringify(marks.map((mark) => [mark.key, mark.externalId, mark.storeId, mark.index])));
}

export function markInFlight(db: SqliteDatabase, scope: string, kind: SyncKind, seq: number, items: readonly InFlightItem[]): void {
  db.prepare(
    `INSERT INTO sync_items (scope, kind, key, external_id, store_id, seen_seq, seen_index, in_flight)
     SELECT ?, ?, value ->> 0, value ->> 1, value ->> 2, ?, value ->> 3, 1 FROM json_each(?) WHERE true
     ON CONFLICT (scope, kind, key) DO UPDATE SET seen_seq = excluded.seen_seq, seen_index = excluded.seen_index, in_flight = 1`,
  ).run(scope, kind, seq, JSON.stringify(items.map((item) => [item.key, item.externalId, item.storeId, item.index])));
  overwritePairs(db, scope, kind, items.flatMap((item) => item.pairs));
}

/** The other kind's fingerprints of the stock pairs a `kind` write touched no longer hold (see SyncState.markInFlight). */
function overwritePairs(db: SqliteDatabase, scope: string, kind: SyncKind, pairs: readonly StockPair[]): void {
  if (pairs.length === 0) return;
  if (kind === 'catalog') {
    db.prepare(
      `UPDATE sync_items SET fingerprint = ?
       FROM (SELECT value ->> 0 AS key, value ->> 1 AS fingerprint FROM json_each(?)) AS pair
       WHERE sync_items.scope = ? AND sync_items.kind = 'stock' AND sync_items.key = pair.key
         AND sync_items.fingerprint IS NOT NULL AND sync_items.fingerprint <> pair.fingerprint`,
    ).run(OVERWRITTEN, JSON.stringify(pairs.map((pair) => [pair.key, pair.fingerprint])), scope);
  } else {
    // store_ids holds the stores joined by spaces (see recordBatch): a store matches as a whole word.
    db.prepare(
      `UPDATE sync_items SET fingerprint = ?
       FROM (SELECT value ->> 0 AS external_id, lower(value ->> 1) AS store_id FROM json_each(?)) AS pair
       WHERE sync_items.scope = ? AND sync_items.kind = 'catalog' AND sync_items.key = pair.external_id
         AND sync_items.fingerprint IS NOT NULL AND instr(' ' || lower(sync_items.store_ids) || ' ', ' ' || pair.store_id || ' ') > 0`,
    ).run(OVERWRITTEN, JSON.stringify(pairs.map((pair) => [pair.externalId, pair.storeId])), scope);
  }
}

export function acknowledge(db: SqliteDatabase, scope: string, kind: SyncKind, sentAt: number, seq: number, acknowledged: readonly AcknowledgedItem[]): void {
  db.prepare(
    `INSERT INTO sync_items (scope, kind, key, external_id, store_id, fingerprint, sent_at, store_ids, seen_seq, seen_index, in_flight)
     SELECT ?, ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3, ?, value ->> 4, ?, value ->> 5, 0 FROM json_each(?) WHERE true
     ON CONFLICT (scope, kind, key) DO UPDATE SET fingerprint = excluded.fingerprint, sent_at = excluded.sent_at, store_ids = excluded.store_ids,
       seen_seq = excluded.seen_seq, seen_index = excluded.seen_index, in_flight = 0`,
  ).run(
    scope,
    kind,
    sentAt,
    seq,
    // Store ids are UUIDs (checked before sending): joined by spaces, which none can hold.
    JSON.stringify(acknowledged.map((item) => [item.key, item.externalId, item.storeId, item.fingerprint, item.storeIds.join(' '), item.index])),
  );
  overwritePairs(db, scope, kind, acknowledged.flatMap((item) => item.pairs ?? []));
}
