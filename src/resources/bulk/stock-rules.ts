// Local checks of PATCH /stock items (wire assumption "Stock: PATCH /stock"). Only what is provably
// invalid is rejected; nothing is rounded or fixed, and `price_override: null` is kept (it removes
// the per-store price).
import type { StockItemResult } from '../../schemas/stock.ts';
import {
  checkOptionalBoolean,
  checkPrice,
  checkRequiredText,
  checkStockQuantity,
  checkUuid,
  isRecord,
  kindOf,
  type Problem,
} from './field-checks.ts';
import { MAX_EXTERNAL_ID_LENGTH } from './product-rules.ts';
import type { ItemRules } from './route.ts';

function nothingToSet(item: Record<string, unknown>): Problem {
  const sets = item.stock_quantity !== undefined || item.price_override !== undefined || item.active !== undefined;
  return sets ? undefined : 'the item sets nothing: give at least one of stock_quantity, price_override, active';
}

/** Why a stock item would be rejected by the service, or `undefined`. */
export function stockProblem(item: unknown): Problem {
  if (!isRecord(item)) return `the item must be an object, got ${kindOf(item)}`;
  return (
    checkRequiredText(item.external_id, 'external_id', MAX_EXTERNAL_ID_LENGTH) ??
    checkUuid(item.store_id, 'store_id') ??
    checkStockQuantity(item.stock_quantity, 'stock_quantity') ??
    checkPrice(item.price_override, 'price_override', true) ??
    checkOptionalBoolean(item.active, 'active') ??
    nothingToSet(item)
  );
}

function fieldOf(item: unknown, field: 'external_id' | 'store_id'): string {
  if (!isRecord(item)) return '';
  const value = item[field];
  return typeof value === 'string' ? value : '';
}

/**
 * Repeat rule of the surface document: the pair (`external_id`, `store_id`). A UUID names the same
 * store in any letter case, so the store part of the key is lower-cased.
 */
export const stockRules: ItemRules<StockItemResult> = {
  problem: stockProblem,
  repeatKey: (item) => {
    const externalId = fieldOf(item, 'external_id');
    const storeId = fieldOf(item, 'store_id');
    // The length prefix keeps the pair unambiguous whatever characters the two strings hold.
    return externalId && storeId ? `${storeId.length}:${storeId.toLowerCase()}:${externalId}` : undefined;
  },
  repeatMessage: (_item, firstIndex) =>
    `external_id and store_id are duplicated in batch (first at index ${firstIndex}): two absolute values for one store in one call; only the first occurrence is sent`,
  rejected: (index, item, message) => ({
    index,
    external_id: fieldOf(item, 'external_id'),
    store_id: fieldOf(item, 'store_id'),
    status: 'error',
    error: { code: 'VALIDATION_ERROR', message },
  }),
  answers: (result, item) => {
    if (result.external_id !== fieldOf(item, 'external_id')) return false;
    const storeId = fieldOf(item, 'store_id');
    return result.store_id === storeId || result.store_id.toLowerCase() === storeId.toLowerCase();
  },
};
