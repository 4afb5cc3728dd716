// What each kind last had acknowledged for the stock pairs it writes, kept with its item: the
// fields (stock, price, activation) of each pair, by store, so that a write by the other kind is
// compared on the fields both give rather than as a whole item (a catalog block that also sends
// `active` and a stock item that sends the same stock agree, and do not resend each other).
import { canonicalJson } from './fingerprint.ts';
import { STOCK_PAIR_FIELDS, type StockPair, type StockPairFields } from './state.ts';

/** The fields of a stock item or a store block that the other kind writes too, as given. */
export function pairFieldsOf(checked: Readonly<Record<string, unknown>>): StockPairFields {
  const fields: Record<string, unknown> = {};
  for (const name of STOCK_PAIR_FIELDS) if (checked[name] !== undefined) fields[name] = checked[name];
  return fields as StockPairFields;
}

/**
 * How a store keeps an acknowledged item's pairs: one JSON object, the fields of each pair under its
 * store id in lower case (store ids match in any letter case); `null` when they are not known.
 */
export function storedPairFields(pairs: readonly StockPair[] | undefined): string | null {
  if (pairs === undefined) return null;
  const byStore: Record<string, StockPairFields> = {};
  for (const pair of pairs) byStore[pair.storeId.toLowerCase()] = pair.fields;
  return canonicalJson(byStore);
}

/**
 * A pair another kind's write is compared with: the key of the other kind's item, the store in
 * lower case, and the fields written.
 */
export function pairsToCompare(kind: 'catalog' | 'stock', pairs: readonly StockPair[]): [string, string, StockPairFields][] {
  // A catalog write touches the stock items of its pairs; a stock write, its product's catalog item.
  return pairs.map((pair) => [kind === 'catalog' ? pair.key : pair.externalId, pair.storeId.toLowerCase(), pair.fields]);
}
