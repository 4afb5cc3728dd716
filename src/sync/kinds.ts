// What differs between a catalog sync and a stock sync: the route's rules, how a batch of changed
// items is sent (through the client's own bulk write, so batching, retries and checks are its), and
// which stores an item was sent with.
import type { IntegrationClient } from '../client.ts';
import { productRules, stockRules } from '../resources/bulk/item-checks.ts';
import type { BulkOptions, ItemResultShape, ItemRules } from '../resources/bulk/types.ts';
import type { ProductItem, ProductResult } from '../schemas/products.ts';
import type { StockItem, StockItemResult } from '../schemas/stock.ts';
import type { SyncKind } from './state.ts';

export interface SyncKindAdapter<Result extends ItemResultShape> {
  kind: SyncKind;
  rules: ItemRules<Result>;
  /** Sends one batch of checked, changed items; resolves with one result per item, in order. */
  send(client: IntegrationClient, items: unknown[], options: Omit<BulkOptions, 'onProgress'>): Promise<Result[]>;
  /** The stores an item names: what `deactivate` turns off when it goes missing. */
  storeIdsOf(checked: unknown): string[];
}

export const catalogKind: SyncKindAdapter<ProductResult> = {
  kind: 'catalog',
  rules: productRules,
  send: async (client, items, options) => (await client.catalog.upsertProducts(items as ProductItem[], options)).results,
  storeIdsOf: (checked) => {
    const stores = (checked as { stores?: unknown }).stores;
    if (!Array.isArray(stores)) return [];
    return stores.map((store) => (store as { store_id: string }).store_id);
  },
};

export const stockKind: SyncKindAdapter<StockItemResult> = {
  kind: 'stock',
  rules: stockRules,
  send: async (client, items, options) => (await client.stock.set(items as StockItem[], options)).results,
  storeIdsOf: (checked) => [(checked as { store_id: string }).store_id],
};
