// The writes of items on Postgres: one statement per window or batch (its rows as arrays through
// unnest), never one per item.
import { OVERWRITTEN, type AcknowledgedItem, type InFlightItem, type SeenMark, type StockPair, type SyncKind } from '../state.ts';

export type Statement = [string, unknown[]];

/** The item statements on the table `items` (schema-qualified). */
export function itemStatements(items: string) {
  const markSeenStatement = (scope: string, kind: string, seq: number, marks: readonly SeenMark[]): Statement => [
    `INSERT INTO ${items} (scope, kind, key, external_id, store_id, seen_seq, seen_index)
     SELECT $1, $2, k, e, s, $3, i FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[]) AS t(k, e, s, i)
     ON CONFLICT (scope, kind, key) DO UPDATE SET seen_seq = EXCLUDED.seen_seq, seen_index = EXCLUDED.seen_index`,
    [scope, kind, seq, marks.map((m) => m.key), marks.map((m) => m.externalId), marks.map((m) => m.storeId), marks.map((m) => m.index)],
  ];
  const inFlightStatement = (scope: string, kind: string, seq: number, marks: readonly InFlightItem[]): Statement => [
    `INSERT INTO ${items} (scope, kind, key, external_id, store_id, seen_seq, seen_index, in_flight)
     SELECT $1, $2, k, e, s, $3, i, true FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[]) AS t(k, e, s, i)
     ON CONFLICT (scope, kind, key) DO UPDATE SET seen_seq = EXCLUDED.seen_seq, seen_index = EXCLUDED.seen_index, in_flight = true`,
    [scope, kind, seq, marks.map((m) => m.key), marks.map((m) => m.externalId), marks.map((m) => m.storeId), marks.map((m) => m.index)],
  ];
  /** The other kind's fingerprints of the stock pairs a `kind` write touched no longer hold (see SyncState.markInFlight). */
  const overwriteStatements = (scope: string, kind: SyncKind, pairs: readonly StockPair[]): Statement[] => {
    if (pairs.length === 0) return [];
    if (kind === 'catalog') {
      return [[
        `UPDATE ${items} AS item SET fingerprint = $1 FROM unnest($3::text[], $4::text[]) AS pair(key, fingerprint)
         WHERE item.scope = $2 AND item.kind = 'stock' AND item.key = pair.key AND item.fingerprint IS NOT NULL AND item.fingerprint <> pair.fingerprint`,
        [OVERWRITTEN, scope, pairs.map((p) => p.key), pairs.map((p) => p.fingerprint)],
      ]];
    }
    return [[
      `UPDATE ${items} AS item SET fingerprint = $1 FROM unnest($3::text[], $4::text[]) AS pair(external_id, store_id)
       WHERE item.scope = $2 AND item.kind = 'catalog' AND item.key = pair.external_id AND item.fingerprint IS NOT NULL
         AND lower(pair.store_id) = ANY (SELECT lower(store) FROM unnest(item.store_ids) AS store)`,
      [OVERWRITTEN, scope, pairs.map((p) => p.externalId), pairs.map((p) => p.storeId)],
    ]];
  };
  const acknowledgeStatement = (scope: string, kind: string, sentAt: number, seq: number, acknowledged: readonly AcknowledgedItem[]): Statement => [
    `INSERT INTO ${items} (scope, kind, key, external_id, store_id, fingerprint, sent_at, store_ids, seen_seq, seen_index, in_flight)
     SELECT $1, $2, k, e, s, f, $3, string_to_array(ids, ' '), $9, i, false FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $10::bigint[]) AS t(k, e, s, f, ids, i)
     ON CONFLICT (scope, kind, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, sent_at = EXCLUDED.sent_at, store_ids = EXCLUDED.store_ids,
       seen_seq = EXCLUDED.seen_seq, seen_index = EXCLUDED.seen_index, in_flight = false`,
    [
      scope,
      kind,
      sentAt,
      acknowledged.map((a) => a.key),
      acknowledged.map((a) => a.externalId),
      acknowledged.map((a) => a.storeId),
      acknowledged.map((a) => a.fingerprint),
      // Store ids are UUIDs (checked before sending): a space cannot occur in one.
      acknowledged.map((a) => a.storeIds.join(' ')),
      seq,
      acknowledged.map((a) => a.index),
    ],
  ];
  return { markSeenStatement, inFlightStatement, overwriteStatements, acknowledgeStatement };
}
