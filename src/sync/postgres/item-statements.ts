// The writes of items on Postgres: one statement per window or batch (its rows as arrays through
// unnest), never one per item.
import { pairsToCompare, storedPairFields } from '../pair-fields.ts';
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
  /**
   * The other kind's fingerprints of the stock pairs a `kind` write touched no longer hold where what
   * it had acknowledged for the pair differs on a field both give, or is not known (see
   * SyncState.markInFlight). Its fields are under the pair's store in `pair_fields`.
   */
  const overwriteStatements = (scope: string, kind: SyncKind, pairs: readonly StockPair[]): Statement[] => {
    if (pairs.length === 0) return [];
    const other = kind === 'catalog' ? 'stock' : 'catalog';
    // A product is touched only through a store it was last sent with (in any letter case).
    const sentWithStore = other === 'catalog' ? 'AND pair.store = ANY (SELECT lower(store) FROM unnest(item.store_ids) AS store)' : '';
    const compared = pairsToCompare(kind, pairs);
    return [[
      `UPDATE ${items} AS item SET fingerprint = $1 FROM unnest($4::text[], $5::text[], $6::text[]) AS pair(key, store, fields)
       WHERE item.scope = $2 AND item.kind = $3 AND item.key = pair.key AND item.fingerprint IS NOT NULL ${sentWithStore}
         AND (NOT coalesce(item.pair_fields ? pair.store, false)
           OR EXISTS (SELECT 1 FROM jsonb_each(pair.fields::jsonb) AS field WHERE item.pair_fields -> pair.store -> field.key <> field.value))`,
      [OVERWRITTEN, scope, other, compared.map(([key]) => key), compared.map(([, store]) => store), compared.map(([, , fields]) => JSON.stringify(fields))],
    ]];
  };
  const acknowledgeStatement = (scope: string, kind: string, sentAt: number, seq: number, acknowledged: readonly AcknowledgedItem[]): Statement => [
    `INSERT INTO ${items} (scope, kind, key, external_id, store_id, fingerprint, sent_at, store_ids, seen_seq, seen_index, in_flight, pair_fields)
     SELECT $1, $2, k, e, s, f, $3, string_to_array(ids, ' '), $9, i, false, pf::jsonb
     FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $10::bigint[], $11::text[]) AS t(k, e, s, f, ids, i, pf)
     ON CONFLICT (scope, kind, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, sent_at = EXCLUDED.sent_at, store_ids = EXCLUDED.store_ids,
       seen_seq = EXCLUDED.seen_seq, seen_index = EXCLUDED.seen_index, in_flight = false, pair_fields = EXCLUDED.pair_fields`,
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
      acknowledged.map((a) => storedPairFields(a.pairs)),
    ],
  ];
  return { markSeenStatement, inFlightStatement, overwriteStatements, acknowledgeStatement };
}
