import type { Issue } from './http/sandbox-error.ts';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decimal places of a number as JSON wrote it (`1.250` parses to 1.25: 2 places). */
export function decimalPlaces(value: number): number {
  const [mantissa = '', exponent = '0'] = value.toString().toLowerCase().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

interface StringRule {
  required?: boolean;
  max?: number;
}

interface NumberRule {
  required?: boolean;
  min?: number;
  integer?: boolean;
  maxDecimals?: number;
}

/**
 * Collects `{ path, message }` issues of one value (a body, or one item of a batch). Each check
 * returns the value when it is usable, so handlers read the result without casts.
 */
export class Checker {
  readonly issues: Issue[] = [];

  add(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  get ok(): boolean {
    return this.issues.length === 0;
  }

  string(value: unknown, path: string, rule: StringRule = {}): string | undefined {
    if (value === undefined) {
      if (rule.required) this.add(path, 'is required');
      return undefined;
    }
    if (typeof value !== 'string') return void this.add(path, `must be a string, got ${typeOf(value)}`);
    if (value.length === 0) return void this.add(path, 'must not be empty');
    if (rule.max !== undefined && value.length > rule.max) return void this.add(path, `must be at most ${rule.max} characters, got ${value.length}`);
    return value;
  }

  number(value: unknown, path: string, rule: NumberRule = {}): number | undefined {
    if (value === undefined) {
      if (rule.required) this.add(path, 'is required');
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) return void this.add(path, `must be a number, got ${typeOf(value)}`);
    if (rule.integer && !Number.isInteger(value)) return void this.add(path, 'must be a whole number');
    if (rule.min !== undefined && value < rule.min) return void this.add(path, `must be at least ${rule.min}`);
    if (rule.maxDecimals !== undefined && decimalPlaces(value) > rule.maxDecimals) {
      return void this.add(path, `has more than ${rule.maxDecimals} decimal places; it is never rounded, send at most ${rule.maxDecimals}`);
    }
    return value;
  }

  boolean(value: unknown, path: string): boolean | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') return void this.add(path, `must be a boolean, got ${typeOf(value)}`);
    return value;
  }
}

export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** `?limit=` of the list routes: a whole number in [1, max], or the default when absent. */
export function limitParam(query: URLSearchParams, fallback: number, max: number, check: Checker): number {
  const raw = query.get('limit');
  if (raw === null) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= max)) {
    // The value is not echoed: it may be anything pasted into the wrong field (a phone number).
    check.add('limit', `must be a whole number from 1 to ${max}`);
    return fallback;
  }
  return value;
}
