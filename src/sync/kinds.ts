// What differs between a catalog sync and a stock sync: the route's rules, how a batch of changed
// items is sent (through the client's own bulk write, so batching, retries and checks are its),
// which stores an item was sent with, and which stock pairs it writes.
import type { IntegrationClient } from '../client.ts';
import { productRules, stockRules } from '../resources/bulk/item-checks.ts';
import type { BulkOptions, ItemResultShape, ItemRules } from '../resources/bulk/types.ts';
import type { ProductItem, ProductResult } from '../schemas/products.ts';
import type { StockItem, StockItemResult } from '../schemas/stock.ts';
import { pairFieldsOf } from './pair-fields.ts';
import type { StockPair, SyncKind } from './state.ts';

export interface SyncKindAdapter<Result extends ItemResultShape> {
  kind: SyncKind;
  rules: ItemRules<Result>;
  /** Sends one batch of checked, changed items; resolves with one result per item, in order. */
  send(client: IntegrationClient, items: unknown[], options: Omit<BulkOptions, 'onProgress'>): Promise<Result[]>;
  /** The stores an item names: what `deactivate` turns off when it goes missing. */
  storeIdsOf(checked: unknown): string[];
  /** The stock pairs a checked item writes, with the fields it writes to each. */
  pairsOf(checked: unknown): StockPair[];
}

function pairOf(externalId: string, checked: { store_id: string } & Record<string, unknown>): StockPair {
  return { key: stockRules.repeatKey({ external_id: externalId, store_id: checked.store_id })!, externalId, storeId: checked.store_id, fields: pairFieldsOf(checked) };
}

type StoreBlock = { store_id: string } & Record<string, unknown>;
const blocksOf = (checked: unknown): StoreBlock[] => {
  const stores = (checked as { stores?: unknown }).stores;
  return Array.isArray(stores) ? (stores as StoreBlock[]) : [];
};

export const catalogKind: SyncKindAdapter<ProductResult> = {
  kind: 'catalog',
  rules: productRules,
  send: async (client, items, options) => (await client.catalog.upsertProducts(items as ProductItem[], options)).results,
  storeIdsOf: (checked) => blocksOf(checked).map((store) => store.store_id),
  // A store block writes the stock, price and activation a stock item of the same pair writes.
  pairsOf: (checked) => {
    const externalId = (checked as { external_id: string }).external_id;
    return blocksOf(checked).map((block) => pairOf(externalId, block));
  },
};

export const stockKind: SyncKindAdapter<StockItemResult> = {
  kind: 'stock',
  rules: stockRules,
  send: async (client, items, options) => (await client.stock.set(items as StockItem[], options)).results,
  storeIdsOf: (checked) => [(checked as { store_id: string }).store_id],
  pairsOf: (checked) => {
    const item = checked as { external_id: string; store_id: string } & Record<string, unknown>;
    return [pairOf(item.external_id, item)];
  },
};
