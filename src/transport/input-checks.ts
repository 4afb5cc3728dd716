import { InvalidInputError, type InputIssue } from '../errors/index.ts';

/** Collects what is wrong with a method's arguments, then throws them together. */
export class InputChecks {
  readonly issues: InputIssue[] = [];

  /** A non-empty string (an id, a code). */
  text(path: string, value: unknown): this {
    if (typeof value !== 'string' || value.trim() === '') this.issues.push({ path, message: 'must be a non-empty string' });
    return this;
  }

  /** A whole number in [min, max], when given. */
  optionalInteger(path: string, value: unknown, min: number, max: number): this {
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max)) {
      this.issues.push({ path, message: `must be a whole number from ${min} to ${max}` });
    }
    return this;
  }

  add(path: string, message: string): this {
    this.issues.push({ path, message });
    return this;
  }

  throwIfAny(): void {
    if (this.issues.length > 0) throw new InvalidInputError(this.issues);
  }
}

/** Path segment for an id: an id with `/` or `?` must not change the route. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
