import { randomUUID } from 'node:crypto';
import type { BulkUpsertResponse, ProductResult } from '../../schemas/products.ts';
import { isoAt } from '../clock.ts';
import type { Route, RouteContext } from '../http/route.ts';
import { canonicalStoreId, keyCoversStore, type ProductRecord, type StoreStock } from '../state.ts';
import { Checker, isRecord, typeOf } from '../validate.ts';
import { describeIssues, externalIdOf, itemError, readBatch } from './batch.ts';

/** Spec 2.2 rule: a gtin of 5 characters or fewer is stored as null. */
const MIN_PERSISTED_GTIN = 6;

interface ValidItem {
  external_id: string;
  name?: string;
  price?: number;
  gtin?: string | null;
  category?: string;
  stores: Array<{ store_id: string } & Partial<StoreStock>>;
}

/** Spec 4.2: upsert by external_id; every item gets a result, failures never fail the batch. */
export const productRoutes: Route[] = [{ method: 'POST', path: '/products/bulk', scope: 'catalog:write', handler: bulkUpsert }];

function bulkUpsert(ctx: RouteContext) {
  const items = readBatch(ctx.body);
  const firstIndex = new Map<string, number>();
  const results = items.map((raw, index): ProductResult => {
    const external_id = externalIdOf(raw);
    const first = firstIndex.get(external_id);
    if (first !== undefined) {
      return { index, external_id, status: 'error', error: itemError('VALIDATION_ERROR', `external_id "${external_id}" is duplicated in batch (first at index ${first}); only the first occurrence is processed`) };
    }
    if (external_id !== '') firstIndex.set(external_id, index);
    return { index, external_id, ...upsertOne(ctx, raw) };
  });
  const count = (status: string) => results.filter((r) => r.status === status).length;
  const body: BulkUpsertResponse = { sync_id: randomUUID(), summary: { created: count('created'), updated: count('updated'), errors: count('error') }, results };
  return { status: 200, body };
}

function upsertOne(ctx: RouteContext, raw: unknown): Pick<ProductResult, 'status' | 'error'> {
  const { state, key } = ctx;
  const checked = validateItem(raw, (id) => state.products.has(id));
  if ('issues' in checked) return { status: 'error', error: itemError('VALIDATION_ERROR', describeIssues(checked.issues)) };
  const item = checked.item;
  // Rule 6: the store scope is checked before any write, so a forbidden store leaves no trace.
  const forbidden = item.stores.find((s) => !keyCoversStore(state, key, s.store_id));
  if (forbidden) return { status: 'error', error: itemError('FORBIDDEN_STORE', `store_id ${forbidden.store_id} is outside the key's stores; nothing of this item was written`) };

  const now = isoAt(ctx.services.clock);
  const existing = state.products.get(item.external_id);
  const product: ProductRecord = existing ?? {
    external_id: item.external_id, name: '', price: 0, gtin: null, category: null, stores: new Map(), created_at: now, updated_at: now,
  };
  if (item.name !== undefined) product.name = item.name;
  if (item.price !== undefined) product.price = item.price;
  if (item.gtin !== undefined) product.gtin = item.gtin !== null && item.gtin.length >= MIN_PERSISTED_GTIN ? item.gtin : null;
  if (item.category !== undefined) product.category = item.category;
  product.updated_at = now;
  state.products.set(product.external_id, product);

  let failedStore: string | null = null;
  for (const block of item.stores) {
    if (state.failingStores.has(canonicalStoreId(block.store_id))) {
      failedStore ??= block.store_id;
      continue;
    }
    const current = product.stores.get(canonicalStoreId(block.store_id)) ?? { stock_quantity: null, price_override: null, active: true };
    product.stores.set(canonicalStoreId(block.store_id), {
      stock_quantity: block.stock_quantity ?? current.stock_quantity,
      price_override: block.price_override ?? current.price_override,
      active: block.active ?? current.active,
    });
  }
  if (failedStore) return { status: 'error', error: itemError('STORE_WRITE_FAILED', `writing store ${failedStore} failed; the product and its other stores were written`) };
  return { status: existing ? 'updated' : 'created' };
}

/** Wire assumption "Products: required fields", plus the types of spec 2.2 and 2.3. */
function validateItem(raw: unknown, exists: (id: string) => boolean): { item: ValidItem } | { issues: Checker['issues'] } {
  const check = new Checker();
  if (!isRecord(raw)) {
    check.add('', `item must be an object, got ${typeOf(raw)}`);
    return { issues: check.issues };
  }
  const external_id = check.string(raw.external_id, 'external_id', { required: true, max: 100 });
  const isNew = external_id !== undefined && !exists(external_id);
  const name = check.string(raw.name, 'name', { required: isNew, max: 255 });
  const price = check.number(raw.price, 'price', { required: isNew, min: 0 });
  let gtin: string | null | undefined;
  if (raw.gtin === null) gtin = null;
  else if (raw.gtin !== undefined) {
    if (typeof raw.gtin === 'string') gtin = raw.gtin;
    else check.add('gtin', `must be a string, got ${typeOf(raw.gtin)}`);
  }
  const category = check.string(raw.category, 'category', { max: 255 });
  const stores: ValidItem['stores'] = [];
  if (raw.stores !== undefined && !Array.isArray(raw.stores)) check.add('stores', `must be an array, got ${typeOf(raw.stores)}`);
  const seen = new Set<string>();
  for (const [i, block] of (Array.isArray(raw.stores) ? raw.stores : []).entries()) {
    const path = `stores[${i}]`;
    if (!isRecord(block)) {
      check.add(path, `must be an object, got ${typeOf(block)}`);
      continue;
    }
    const store_id = check.string(block.store_id, `${path}.store_id`, { required: true });
    if (store_id !== undefined && seen.has(canonicalStoreId(store_id))) check.add(`${path}.store_id`, `repeats store ${store_id} within the item`);
    if (store_id !== undefined) seen.add(canonicalStoreId(store_id));
    const stock_quantity = check.number(block.stock_quantity, `${path}.stock_quantity`, { maxDecimals: 3 });
    const price_override = check.number(block.price_override, `${path}.price_override`, { min: 0 });
    const active = check.boolean(block.active, `${path}.active`);
    if (store_id !== undefined) stores.push({ store_id, stock_quantity, price_override, active });
  }
  if (!check.ok || external_id === undefined) return { issues: check.issues };
  return { item: { external_id, name, price, gtin, category, stores } };
}
