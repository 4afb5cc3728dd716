// Small checks shared by the item rules. Each returns why a value is provably invalid, naming where
// it is (`stores[1].stock_quantity`) and never echoing text values: an item may hold personal data.
import { decimalPlaces } from './decimals.ts';

/** Why a value is invalid, or `undefined` when it passes. */
export type Problem = string | undefined;

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
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

export function checkUuid(value: unknown, path: string): Problem {
  if (value === undefined) return `${path} is missing`;
  if (typeof value !== 'string') return `${path} must be a UUID string, got ${kindOf(value)}`;
  return UUID_SHAPE.test(value) ? undefined : `${path} is not a UUID (8-4-4-4-12 hexadecimal digits)`;
}

/** Absent, or a finite number ≥ 0 (a price). `nullable` also lets `null` through. */
export function checkPrice(value: unknown, path: string, nullable = false): Problem {
  if (value === undefined || (nullable && value === null)) return undefined;
  if (typeof value !== 'number') return `${path} must be a number${nullable ? ' or null' : ''}, got ${kindOf(value)}`;
  if (!Number.isFinite(value)) return nonFinite(value, path);
  return value < 0 ? `${path} is ${value}; it must be 0 or more` : undefined;
}

/** Absent, or a finite number with at most 3 decimal places (spec 2.3: kept, never rounded). */
export function checkStockQuantity(value: unknown, path: string): Problem {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') return `${path} must be a number, got ${kindOf(value)}`;
  if (!Number.isFinite(value)) return nonFinite(value, path);
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

/** The first problem of several checks, run in order until one fails. */
export function firstProblem(...checks: (() => Problem)[]): Problem {
  for (const check of checks) {
    const problem = check();
    if (problem) return problem;
  }
  return undefined;
}
