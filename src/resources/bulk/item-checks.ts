// Local checks of bulk items: only the provably invalid is rejected, nothing fixed. A check says why
// and where (`stores[1].stock_quantity`), never echoing text values: they may be personal data.
import type { ProductResult } from '../../schemas/products.ts';
import type { StockItemResult } from '../../schemas/stock.ts';
import type { ItemRules } from './types.ts';

/** Why a value is invalid, or `undefined` when it passes. */
type Problem = string | undefined;

/** Deeper than this, an item is refused rather than risk the stack (no real product nests so). */
const MAX_DEPTH = 1000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `null`, `an array`, `a string`…: what was found, without the value itself. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' || type === 'undefined' ? type : `a ${type}`;
}

/** Characters as a person counts them (code points), so an emoji is one, not two. */
function characters(text: string, atMost: number): number {
  return text.length <= atMost ? text.length : [...text].length;
}

function nonFinite(value: number, path: string): string {
  return `${path} is ${value}, which JSON would send as null`;
}

/** Required, non-empty, at most `max` characters. */
function checkRequiredText(value: unknown, path: string, max: number): Problem {
  if (value === undefined) return `${path} is missing`;
  if (typeof value !== 'string') return `${path} must be a string, got ${kindOf(value)}`;
  if (value.length === 0) return `${path} is empty`;
  const length = characters(value, max);
  if (length > max) return `${path} has ${length} characters; at most ${max} are allowed`;
  return undefined;
}

/** As {@link checkRequiredText}, but absent (`undefined`) is fine. */
function checkOptionalText(value: unknown, path: string, max: number): Problem {
  return value === undefined ? undefined : checkRequiredText(value, path, max);
}

/** Absent, `null` or a string: fields the service stores as they come (`gtin`, `category`). */
function checkNullableString(value: unknown, path: string): Problem {
  if (value === undefined || value === null || typeof value === 'string') return undefined;
  return `${path} must be a string, got ${kindOf(value)}`;
}

/** `/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i`, by hand: it runs per store block. */
function isUuid(value: string): boolean {
  if (value.length !== 36) return false;
  for (let i = 0; i < 36; i += 1) {
    const code = value.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (code !== 0x2d) return false; // '-'
    } else if (!((code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x66))) {
      return false; // not 0-9, a-f, A-F
    }
  }
  return true;
}

function checkUuid(value: unknown, path: string): Problem {
  if (value === undefined) return `${path} is missing`;
  if (typeof value !== 'string') return `${path} must be a UUID string, got ${kindOf(value)}`;
  return isUuid(value) ? undefined : `${path} is not a UUID (8-4-4-4-12 hexadecimal digits)`;
}

/** Absent, or a finite number ≥ 0 (a price). `nullable` also lets `null` through. */
function checkPrice(value: unknown, path: string, nullable = false): Problem {
  if (value === undefined || (nullable && value === null)) return undefined;
  if (typeof value !== 'number') return `${path} must be a number${nullable ? ' or null' : ''}, got ${kindOf(value)}`;
  if (!Number.isFinite(value)) return nonFinite(value, path);
  return value < 0 ? `${path} is ${value}; it must be 0 or more` : undefined;
}

/**
 * A quick, sufficient test for "at most 3 decimal places" without writing the number out: if some
 * decimal with at most 3 places reads back as `value`, the shortest one (what JSON writes) has no
 * more places. When this says no, {@link decimalPlaces} decides.
 */
function inThousandths(value: number): boolean {
  const scaled = value * 1000;
  return Number.isInteger(scaled) && scaled / 1000 === value;
}

/** Absent, or a finite number with at most 3 decimal places (spec 2.3: kept, never rounded). */
function checkStockQuantity(value: unknown, path: string): Problem {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') return `${path} must be a number, got ${kindOf(value)}`;
  if (!Number.isFinite(value)) return nonFinite(value, path);
  if (inThousandths(value)) return undefined;
  const places = decimalPlaces(value);
  return places > 3 ? `${path} has ${places} decimal places; at most 3 are kept and nothing is rounded` : undefined;
}

function checkOptionalBoolean(value: unknown, path: string): Problem {
  if (value === undefined || typeof value === 'boolean') return undefined;
  return `${path} must be a boolean, got ${kindOf(value)}`;
}

/** An item as it will be sent, or why it cannot be; `unreadable`: reading it threw, so it must not be read again. */
export type Checked = { ok: true; value: unknown } | { ok: false; problem: string; unreadable?: boolean };

/** Said of an item whose reading threw: the thrown message may hold anything, so it is not repeated. */
export const UNREADABLE_ITEM = 'the item could not be read (a getter or a Proxy trap threw while copying it)';

/**
 * The primitive inside a `Number`, `String`, `Boolean` or `BigInt` object, as JSON writes it;
 * `NOT_BOXED` for any other object (plain objects and arrays, told apart by their prototype first).
 */
function unboxed(value: object): unknown {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === Array.prototype || proto === null) return NOT_BOXED;
  if (value instanceof Number) return Number.prototype.valueOf.call(value);
  if (value instanceof String) return String.prototype.valueOf.call(value);
  if (value instanceof Boolean) return Boolean.prototype.valueOf.call(value);
  if (value instanceof BigInt) return BigInt.prototype.valueOf.call(value);
  return NOT_BOXED;
}

const NOT_BOXED = Symbol('not boxed');

const dateToISOString = Date.prototype.toISOString;

/** `stores[0].store_id` from its segments. */
function pathOf(segments: ReadonlyArray<string | number>): string {
  let path = '';
  for (const segment of segments) path = typeof segment === 'number' ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment;
  return path;
}

/**
 * A plain copy of an item (own enumerable fields, read once): what is checked is what is sent, no
 * `toJSON` or getter runs again. What JSON cannot carry faithfully (a cycle, a BigInt, NaN, a
 * function in an array) makes the item invalid instead of failing its batch or being sent changed.
 * Dates, boxed primitives and left-out fields are copied as JSON would write them.
 */
export function plainCopy(item: unknown): Checked {
  if (typeof item === 'object' && item !== null && checkedCopies.has(item)) return { ok: true, value: item };
  const ancestors = new Set<object>();
  // The path to the value being copied, as segments: its text is built only for a problem's message.
  const segments: Array<string | number> = [];
  let problem: string | undefined;
  const copy = (value: unknown): unknown => {
    if (ancestors.size > MAX_DEPTH) {
      problem = `${pathOf(segments)} is nested more than ${MAX_DEPTH} levels deep`;
      return undefined;
    }
    switch (typeof value) {
      case 'number':
        if (!Number.isFinite(value)) problem = nonFinite(value, pathOf(segments) || 'the item');
        return value;
      case 'bigint':
        problem = `${pathOf(segments) || 'the item'} is a bigint, which JSON cannot carry`;
        return undefined;
      case 'object':
        break;
      default:
        return value;
    }
    if (value === null) return null;
    const primitive = unboxed(value);
    if (primitive !== NOT_BOXED) return copy(primitive);
    if (value instanceof Date) {
      const time = value.getTime();
      if (Number.isNaN(time)) problem = `${pathOf(segments) || 'the item'} is an invalid Date, which JSON would send as null`;
      return Number.isNaN(time) ? undefined : dateToISOString.call(value);
    }
    if (ancestors.has(value)) {
      problem = `${pathOf(segments) || 'the item'} refers back to itself (a cycle), which JSON cannot carry`;
      return undefined;
    }
    ancestors.add(value);
    let result: unknown;
    if (Array.isArray(value)) {
      const out: unknown[] = new Array(value.length);
      for (let i = 0; i < value.length && problem === undefined; i += 1) {
        const element: unknown = value[i];
        segments.push(i);
        if (element === undefined || typeof element === 'function' || typeof element === 'symbol') {
          problem = `${pathOf(segments)} is ${kindOf(element)}, which JSON would send as null`;
        } else {
          out[i] = copy(element);
        }
        segments.pop();
      }
      result = out;
    } else {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (problem !== undefined) break;
        const field: unknown = (value as Record<string, unknown>)[key];
        if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
        segments.push(key);
        const copied = copy(field);
        segments.pop();
        // defineProperty for `__proto__`, so that it stays a plain field; assignment for the rest.
        if (key === '__proto__') Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
        else out[key] = copied;
      }
      result = out;
    }
    ancestors.delete(value);
    return result;
  };
  let value: unknown;
  try {
    value = copy(item);
  } catch {
    return { ok: false, problem: UNREADABLE_ITEM, unreadable: true };
  }
  return problem === undefined ? { ok: true, value } : { ok: false, problem };
}

/**
 * Plain copies this SDK made and hands on untouched (the delta sync sends the copies it hashed):
 * copying one again would give an equal copy, so it is used as it is.
 */
const checkedCopies = new WeakSet<object>();

/** Marks a value {@link plainCopy} returned, never exposed to user code, as needing no second copy. */
export function markCheckedCopy(value: unknown): void {
  if (typeof value === 'object' && value !== null) checkedCopies.add(value);
}

/**
 * Decimal places of a number as JSON writes it (the shortest string that reads back as it),
 * exponent forms included: `0.1 + 0.2` has 17, `1e-7` has 7, `1.5e21` has 0.
 */
export function decimalPlaces(value: number): number {
  if (Number.isInteger(value)) return 0; // written without a fraction (or as 1e+21: none either)
  const text = String(Math.abs(value));
  const e = text.indexOf('e');
  const mantissaEnd = e === -1 ? text.length : e;
  const dot = text.indexOf('.');
  const fraction = dot === -1 || dot > mantissaEnd ? 0 : mantissaEnd - dot - 1;
  return Math.max(0, fraction - (e === -1 ? 0 : Number(text.slice(e + 1))));
}

// POST /products/bulk (spec 2.2, 2.3): `name` and `price` may be left out, an update keeps them.

const MAX_EXTERNAL_ID_LENGTH = 100;
const MAX_NAME_LENGTH = 255;

// Run per item of inputs of millions: no closures; a field's path is built only once its check failed.

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

function fieldOf(item: unknown, field: 'external_id' | 'store_id'): string {
  const value = isRecord(item) ? item[field] : undefined;
  return typeof value === 'string' ? value : '';
}

/** Repeat rule of spec 4.2 rule 3: the upsert key is `external_id`. */
export const productRules: ItemRules<ProductResult> = {
  problem: productProblem,
  repeatKey: (item) => fieldOf(item, 'external_id') || undefined,
  repeatMessage: (_item, firstIndex) =>
    `external_id is duplicated in batch (first at index ${firstIndex}); only the first occurrence is sent`,
  rejected: (index, item, message) => ({
    index,
    external_id: fieldOf(item, 'external_id'),
    status: 'error',
    error: { code: 'VALIDATION_ERROR', message },
  }),
  answers: (result, item) => result.external_id === fieldOf(item, 'external_id'),
};

// PATCH /stock items (wire assumption): `price_override: null` is kept (it removes the per-store price).

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

/** Repeat rule of the surface document: the pair (`external_id`, `store_id`), the store in any letter case. */
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
