import { InvalidInputError } from '../errors/invalid-input-error.ts';

/** The longest tenant id: it is a path segment of the webhook URL and a key in every table. */
export const MAX_TENANT_ID_LENGTH = 128;

/**
 * The rule a tenant id breaks, or `null`: it must be usable as one URL path segment as is (the
 * receiver takes the tenant from the URL's last segment), so only RFC 3986 unreserved characters
 * (letters, digits, `-`, `.`, `_`, `~`), 1 to 128 of them, and not `.` or `..`.
 */
export function tenantIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return `must be a string, got ${id === null ? 'null' : typeof id}`;
  if (id === '') return 'is empty';
  if (id.length > MAX_TENANT_ID_LENGTH) return `is longer than ${MAX_TENANT_ID_LENGTH} characters (${id.length})`;
  if (id.includes('/')) return 'contains "/": it must be a single URL path segment';
  if (id === '.' || id === '..') return 'is "." or "..", which a URL path resolves away';
  const bad = /[^A-Za-z0-9._~-]/.exec(id);
  if (bad) return `contains ${describe(bad[0])}: only letters, digits, "-", ".", "_" and "~" can stand in a URL path segment unencoded`;
  return null;
}

/** Throws `InvalidInputError` (path `tenantId`) naming the rule `id` breaks. */
export function checkTenantId(id: unknown): asserts id is string {
  const problem = tenantIdProblem(id);
  if (problem !== null) throw new InvalidInputError([{ path: 'tenantId', message: problem }]);
}

function describe(char: string): string {
  if (/\s/.test(char)) return 'whitespace';
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return 'a control character';
  return `"${char}"`;
}
