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

/**
 * Path segment for an id: an id with `/` or `?` must not change the route, and `.` or `..` (which
 * URL resolution would apply, e.g. `orders.get('..')` becoming `GET /integration/v1/`) is refused.
 */
export function segment(id: string, name: string): string {
  if (id === '.' || id === '..') throw new InvalidInputError([{ path: name, message: 'must not be "." or ".."' }]);
  return encodeURIComponent(id);
}

/** `.` and `..`, also percent-encoded (`%2e`, `.%2E`...): URL parsers resolve them all. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Refuses a path that could leave `/integration/v1` once resolved: an empty, `.` or `..` segment
 * (encoded or not), or a backslash (which URL parsers read as `/`).
 */
export function checkPathSegments(path: string): void {
  const segments = path.split('/').slice(1);
  if (path.includes('\\') || segments.some((part) => part === '' || DOT_SEGMENT.test(part))) {
    throw new InvalidInputError([{ path: 'path', message: 'must not have empty, "." or ".." segments (encoded or not), nor a backslash: it could leave /integration/v1' }]);
  }
}
