import { randomUUID } from 'node:crypto';
import type { StockItemResult, StockResponse } from '../../schemas/stock.ts';
import { isoAt } from '../clock.ts';
import type { Route, RouteContext } from '../http/route.ts';
import { canonicalStoreId, keyCoversStore } from '../state.ts';
import { Checker, isRecord, typeOf } from '../validate.ts';
import { describeIssues, externalIdOf, itemError, readBatch } from './batch.ts';

/**
 * Spec 4.3 and the stock wire assumption: absolute values per store. Items are applied in order,
 * so a pair repeated in one request ends with the last item's values.
 */
export const stockRoutes: Route[] = [{ method: 'PATCH', path: '/stock', scope: 'stock:write', handler: setStock }];

function setStock(ctx: RouteContext) {
  const results = readBatch(ctx.body).map((raw, index) => setOne(ctx, raw, index));
  const updated = results.filter((r) => r.status === 'updated').length;
  const body: StockResponse = { sync_id: randomUUID(), summary: { updated, errors: results.length - updated }, results };
  return { status: 200, body };
}

function setOne({ state, key, services }: RouteContext, raw: unknown, index: number): StockItemResult {
  const external_id = externalIdOf(raw);
  const store_id = isRecord(raw) && typeof raw.store_id === 'string' ? raw.store_id : '';
  const fail = (code: Parameters<typeof itemError>[0], message: string): StockItemResult => ({ index, external_id, store_id, status: 'error', error: itemError(code, message) });

  const check = new Checker();
  if (!isRecord(raw)) return fail('VALIDATION_ERROR', `item must be an object, got ${typeOf(raw)}`);
  check.string(raw.external_id, 'external_id', { required: true, max: 100 });
  check.string(raw.store_id, 'store_id', { required: true });
  const stock_quantity = check.number(raw.stock_quantity, 'stock_quantity', { maxDecimals: 3 });
  const price_override = raw.price_override === null ? null : check.number(raw.price_override, 'price_override', { min: 0 });
  const active = check.boolean(raw.active, 'active');
  if (raw.stock_quantity === undefined && raw.price_override === undefined && raw.active === undefined) {
    check.add('', 'sets nothing: give at least one of stock_quantity, price_override (null removes it) or active');
  }
  if (!check.ok) return fail('VALIDATION_ERROR', describeIssues(check.issues));
  if (!keyCoversStore(state, key, store_id)) return fail('FORBIDDEN_STORE', `store_id ${store_id} is outside the key's stores`);
  const product = state.products.get(external_id);
  if (!product) return fail('PRODUCT_NOT_FOUND', `external_id "${external_id}" is not in the catalog; send it through POST /products/bulk first`);
  if (state.failingStores.has(canonicalStoreId(store_id))) return fail('STORE_WRITE_FAILED', `writing store ${store_id} failed; nothing was changed`);

  const current = product.stores.get(canonicalStoreId(store_id)) ?? { stock_quantity: null, price_override: null, active: true };
  product.stores.set(canonicalStoreId(store_id), {
    stock_quantity: stock_quantity ?? current.stock_quantity,
    price_override: price_override === undefined ? current.price_override : price_override,
    active: active ?? current.active,
  });
  product.updated_at = isoAt(services.clock);
  return { index, external_id, store_id, status: 'updated' };
}
