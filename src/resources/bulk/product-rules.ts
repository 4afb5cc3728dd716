// Local checks of POST /products/bulk items (spec 2.2, 2.3; wire assumption "Products: required
// fields"). Only what is provably invalid is rejected; `name` and `price` may be left out because
// an update keeps the stored values. Nothing is rounded or fixed.
import type { ProductResult } from '../../schemas/products.ts';
import {
  checkNullableString,
  checkOptionalBoolean,
  checkOptionalText,
  checkPrice,
  checkRequiredText,
  checkStockQuantity,
  checkUuid,
  isRecord,
  isUuid,
  kindOf,
  type Problem,
} from './field-checks.ts';
import type { ItemRules } from './route.ts';

export const MAX_EXTERNAL_ID_LENGTH = 100;
export const MAX_NAME_LENGTH = 255;

// These checks run for every item of inputs of millions: no closures, and a field's path
// (`stores[3].stock_quantity`) is only built once its check has failed, by checking it again with
// the path (the checks return `undefined` without touching the path when the value passes).

function storeBlockProblem(block: unknown, i: number): Problem {
  if (!isRecord(block)) return `stores[${i}] must be an object, got ${kindOf(block)}`;
  const storeId = block.store_id;
  if (typeof storeId !== 'string' || !isUuid(storeId)) return checkUuid(storeId, `stores[${i}].store_id`);
  const quantity = block.stock_quantity;
  if (checkStockQuantity(quantity, '')) return checkStockQuantity(quantity, `stores[${i}].stock_quantity`);
  // null is let through: the spec does not say whether the upsert can remove a per-store price.
  const price = block.price_override;
  if (checkPrice(price, '', true)) return checkPrice(price, `stores[${i}].price_override`, true);
  const active = block.active;
  if (checkOptionalBoolean(active, '')) return checkOptionalBoolean(active, `stores[${i}].active`);
  return undefined;
}

function storesProblem(stores: unknown): Problem {
  if (stores === undefined) return undefined;
  if (!Array.isArray(stores)) return `stores must be an array, got ${kindOf(stores)}`;
  for (let i = 0; i < stores.length; i += 1) {
    const problem = storeBlockProblem(stores[i], i);
    if (problem) return problem;
  }
  return undefined;
}

/** Why a product item would be rejected by the service, or `undefined`. */
export function productProblem(item: unknown): Problem {
  if (!isRecord(item)) return `the item must be an object, got ${kindOf(item)}`;
  return (
    checkRequiredText(item.external_id, 'external_id', MAX_EXTERNAL_ID_LENGTH) ??
    checkOptionalText(item.name, 'name', MAX_NAME_LENGTH) ??
    checkPrice(item.price, 'price') ??
    checkNullableString(item.gtin, 'gtin') ??
    checkNullableString(item.category, 'category') ??
    storesProblem(item.stores)
  );
}

function externalIdOf(item: unknown): string {
  return isRecord(item) && typeof item.external_id === 'string' ? item.external_id : '';
}

/** Repeat rule of spec 4.2 rule 3: the upsert key is `external_id`. */
export const productRules: ItemRules<ProductResult> = {
  problem: productProblem,
  repeatKey: (item) => externalIdOf(item) || undefined,
  repeatMessage: (_item, firstIndex) =>
    `external_id is duplicated in batch (first at index ${firstIndex}); only the first occurrence is sent`,
  rejected: (index, item, message) => ({
    index,
    external_id: externalIdOf(item),
    status: 'error',
    error: { code: 'VALIDATION_ERROR', message },
  }),
  answers: (result, item) => result.external_id === externalIdOf(item),
};
