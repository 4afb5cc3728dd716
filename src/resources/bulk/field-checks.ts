// Small checks shared by the item rules. Each returns why a value is provably invalid, naming where
// it is (`stores[1].stock_quantity`) and never echoing text values: an item may hold personal data.
import { decimalPlaces } from './decimals.ts';

/** Why a value is invalid, or `undefined` when it passes. */
export type Problem = string | undefined;

const MAX_DEPTH = 64;

export function isRecord(value: unknown): value is Record<string, unknown> {
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
export function checkRequiredText(value: unknown, path: string, max: number): Problem {
  if (value === undefined) return `${path} is missing`;
  if (typeof value !== 'string') return `${path} must be a string, got ${kindOf(value)}`;
  if (value.length === 0) return `${path} is empty`;
  const length = characters(value, max);
  if (length > max) return `${path} has ${length} characters; at most ${max} are allowed`;
  return undefined;
}

/** As {@link checkRequiredText}, but absent (`undefined`) is fine. */
export function checkOptionalText(value: unknown, path: string, max: number): Problem {
  return value === undefined ? undefined : checkRequiredText(value, path, max);
}

/** Absent, `null` or a string: fields the service stores as they come (`gtin`, `category`). */
export function checkNullableString(value: unknown, path: string): Problem {
  if (value === undefined || value === null || typeof value === 'string') return undefined;
  return `${path} must be a string, got ${kindOf(value)}`;
}

/**
 * `/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i`, checked by hand: it runs
 * once per store block.
 */
export function isUuid(value: string): boolean {
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

export function checkUuid(value: unknown, path: string): Problem {
  if (value === undefined) return `${path} is missing`;
  if (typeof value !== 'string') return `${path} must be a UUID string, got ${kindOf(value)}`;
  return isUuid(value) ? undefined : `${path} is not a UUID (8-4-4-4-12 hexadecimal digits)`;
}

/** Absent, or a finite number ≥ 0 (a price). `nullable` also lets `null` through. */
export function checkPrice(value: unknown, path: string, nullable = false): Problem {
  if (value === undefined || (nullable && value === null)) return undefined;
  if (typeof value !== 'number') return `${path} must be a number${nullable ? ' or null' : ''}, got ${kindOf(value)}`;
  if (!Number.isFinite(value)) return nonFinite(value, path);
  return value < 0 ? `${path} is ${value}; it must be 0 or more` : undefined;
}

/**
 * A quick, sufficient test for "at most 3 decimal places", without writing the number out: some
 * decimal `d` with at most 3 places reads back as `value`. The shortest decimal that reads back as
 * `value` (what JSON writes) then has no more places than `d`: one with more places and no more
 * digits would be smaller than a power of ten lying between it and `d`, which would read back as
 * `value` too with a single digit. When this says no, {@link decimalPlaces} decides.
 */
function inThousandths(value: number): boolean {
  const scaled = value * 1000;
  return Number.isInteger(scaled) && scaled / 1000 === value;
}

/** Absent, or a finite number with at most 3 decimal places (spec 2.3: kept, never rounded). */
export function checkStockQuantity(value: unknown, path: string): Problem {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') return `${path} must be a number, got ${kindOf(value)}`;
  if (!Number.isFinite(value)) return nonFinite(value, path);
  if (inThousandths(value)) return undefined;
  const places = decimalPlaces(value);
  return places > 3 ? `${path} has ${places} decimal places; at most 3 are kept and nothing is rounded` : undefined;
}

export function checkOptionalBoolean(value: unknown, path: string): Problem {
  if (value === undefined || typeof value === 'boolean') return undefined;
  return `${path} must be a boolean, got ${kindOf(value)}`;
}

/**
 * A NaN or ±Infinity anywhere in the item, fields the SDK does not know included: JSON would
 * silently send it as null.
 */
export function findNonFinite(value: unknown, path: string, depth = 0): Problem {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : nonFinite(value, path);
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const problem = findNonFinite(value[i], `${path}[${i}]`, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const [key, field] of Object.entries(value)) {
    const problem = findNonFinite(field, path ? `${path}.${key}` : key, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Whether {@link findNonFinite} could find anything, without building a path or an entry array:
 * the common answer, no, costs one walk of the item's own values. It may answer yes for a value
 * `findNonFinite` does not visit (an inherited enumerable property): the caller then asks
 * `findNonFinite`, which has the last word.
 */
export function mayHoldNonFinite(value: unknown, depth = 0): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) if (mayHoldNonFinite(value[i], depth + 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  // for…in visits every own enumerable key that Object.entries does (and inherited ones too).
  for (const key in record) {
    const field = record[key];
    if (typeof field === 'number' ? !Number.isFinite(field) : mayHoldNonFinite(field, depth + 1)) return true;
  }
  return false;
}

/** {@link findNonFinite} of a whole item, at the cost of {@link mayHoldNonFinite} when it finds nothing. */
export function itemNonFinite(item: Record<string, unknown>): Problem {
  return mayHoldNonFinite(item) ? findNonFinite(item, '') : undefined;
}
