// The writes of items on SQLite: one statement per window or batch (its rows as one JSON array),
// never one per item.
import type { SqliteDatabase } from '../../storage/sqlite.ts';
import { pairsToCompare, storedPairFields } from '../pair-fields.ts';
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

/**
 * The other kind's fingerprints of the stock pairs a `kind` write touched no longer hold where what it
 * had acknowledged for the pair differs on a field both give, or is not known (see
 * SyncState.markInFlight). Its fields are under the pair's store in `pair_fields`.
 */
function overwritePairs(db: SqliteDatabase, scope: string, kind: SyncKind, pairs: readonly StockPair[]): void {
  if (pairs.length === 0) return;
  const other = kind === 'catalog' ? 'stock' : 'catalog';
  // A product is touched only through a store it was last sent with; store_ids holds the stores
  // joined by spaces (see acknowledge): a store matches as a whole word, in any letter case.
  const sentWithStore = other === 'catalog' ? "AND instr(' ' || lower(item.store_ids) || ' ', ' ' || pair.store || ' ') > 0" : '';
  db.prepare(
    `UPDATE sync_items AS item SET fingerprint = ?
     FROM (SELECT value ->> 0 AS key, value ->> 1 AS store, value ->> 2 AS fields FROM json_each(?)) AS pair
     WHERE item.scope = ? AND item.kind = ? AND item.key = pair.key AND item.fingerprint IS NOT NULL ${sentWithStore}
       AND ((item.pair_fields -> ('$."' || pair.store || '"')) IS NULL
         OR EXISTS (SELECT 1 FROM json_each(pair.fields) AS field
                    WHERE (item.pair_fields -> ('$."' || pair.store || '"') -> ('$."' || field.key || '"')) <> (pair.fields -> ('$."' || field.key || '"'))))`,
  ).run(OVERWRITTEN, JSON.stringify(pairsToCompare(kind, pairs)), scope, other);
}

export function acknowledge(db: SqliteDatabase, scope: string, kind: SyncKind, sentAt: number, seq: number, acknowledged: readonly AcknowledgedItem[]): void {
  db.prepare(
    `INSERT INTO sync_items (scope, kind, key, external_id, store_id, fingerprint, sent_at, store_ids, seen_seq, seen_index, in_flight, pair_fields)
     SELECT ?, ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3, ?, value ->> 4, ?, value ->> 5, 0, value ->> 6 FROM json_each(?) WHERE true
     ON CONFLICT (scope, kind, key) DO UPDATE SET fingerprint = excluded.fingerprint, sent_at = excluded.sent_at, store_ids = excluded.store_ids,
       seen_seq = excluded.seen_seq, seen_index = excluded.seen_index, in_flight = 0, pair_fields = excluded.pair_fields`,
  ).run(
    scope,
    kind,
    sentAt,
    seq,
    // Store ids are UUIDs (checked before sending): joined by spaces, which none can hold.
    JSON.stringify(acknowledged.map((item) => [item.key, item.externalId, item.storeId, item.fingerprint, item.storeIds.join(' '), item.index, storedPairFields(item.pairs)])),
  );
  overwritePairs(db, scope, kind, acknowledged.flatMap((item) => item.pairs ?? []));
}
