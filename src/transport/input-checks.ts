import { InvalidInputError, type InputIssue } from '../errors/index.ts';

/** Collects what is wrong with a method's arguments, then throws them together. */
export class InputChecks {
  readonly issues: InputIssue[] = [];

  /** A non-empty string (an id, a code) that can be sent as it is (no lone surrogate). */
  text(path: string, value: unknown): this {
    if (typeof value !== 'string' || value.trim() === '') this.issues.push({ path, message: 'must be a non-empty string' });
    else if (!isWellFormed(value)) this.issues.push(notWellFormed(path));
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
 * Path segment for an id: an id with `/` or `?` must not change the route, and one that is `.` or
 * `..` in any of its {@link readings} is refused (`orders.get('..')` would be `GET /integration/v1/`).
 */
export function segment(id: string, name: string): string {
  if (typeof id === 'string' && !isWellFormed(id)) throw new InvalidInputError([notWellFormed(name)]);
  // An id that does not decode (`50%`) is sent encoded as it is: only what decodes to a dot counts.
  if (typeof id === 'string' && readings(id).some((form) => form !== null && DOT_SEGMENT.test(form))) {
    throw new InvalidInputError([{ path: name, message: 'must not be "." or ".." (also percent-encoded)' }]);
  }
  return encodeURIComponent(id);
}

/**
 * A lone UTF-16 surrogate (`'\uD800'`, half of an emoji cut in two) has no UTF-8 form: in a path
 * `encodeURIComponent` throws a bare `URIError`, and in a query or a URL the parser silently sends
 * U+FFFD instead, another id. Either way it is refused as bad input, before anything is sent.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** No lone surrogate (`String.prototype.isWellFormed`, which ES2023 typings lack). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

export function notWellFormed(path: string): InputIssue {
  return { path, message: 'must be well-formed Unicode (it holds a lone UTF-16 surrogate, which cannot be sent)' };
}

/** `.` and `..`, also percent-encoded (`%2e`, `.%2E`...), also with a `;parameter` (`..;/` on Tomcat). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}(?:;.*)?$/is;

/** C0 controls and DEL: the URL parser drops tab, CR and LF (`.\t.` would become `..`) and keeps no other. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * How the text may be read on its way: as given, percent-decoded once and twice (a proxy, then a
 * server), each also NFKC-normalised (`．` is `.`). `null` when the first decoding fails (malformed,
 * or overlong UTF-8 such as `%c0%ae`); a failing second one (`50%25`) is simply not a reading.
 */
function readings(text: string): (string | null)[] {
  const once = decode(text);
  if (once === null) return [text, text.normalize('NFKC'), null];
  const twice = decode(once);
  return (twice === null ? [text, once] : [text, once, twice]).flatMap((form) => [form, form.normalize('NFKC')]);
}

function decode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * Refuses a path that could leave `/integration/v1` once resolved (every request's path): an empty,
 * `.` or `..` segment (encoded or not), a backslash (read as `/`) or a {@link CONTROL} character.
 */
export function checkPathSegments(path: string): void {
  if (!isWellFormed(path)) throw new InvalidInputError([notWellFormed('path')]);
  if (CONTROL.test(path) || path.includes('\\') || hasDotOrEmptySegment(path)) throw unsafePath();
}

/**
 * For a path written by the caller (`client.request`): {@link checkPathSegments} on each of its
 * {@link readings} too (where `%2F`, `%5C` and `%09` are a slash, a backslash and a tab), and no
 * malformed percent-encoding. The query and fragment are not resolved as a path: only their raw
 * form is checked.
 */
export function checkCallerPath(path: string): void {
  checkPathSegments(path);
  const end = path.search(/[?#]/);
  const forms = readings(end === -1 ? path : path.slice(0, end));
  if (forms.some((form) => form === null || CONTROL.test(form) || form.includes('\\') || hasDotOrEmptySegment(form))) throw unsafePath();
}

function unsafePath(): InvalidInputError {
  return new InvalidInputError([
    { path: 'path', message: 'must not have empty, "." or ".." segments (encoded or not), a backslash, a control character or malformed percent-encoding: it could leave /integration/v1' },
  ]);
}

function hasDotOrEmptySegment(path: string): boolean {
  return path.split('/').slice(1).some((part) => part === '' || DOT_SEGMENT.test(part));
}
