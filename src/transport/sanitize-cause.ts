import type { Redactor } from './redact.ts';

/**
 * The innermost error of the `cause` chain that says what happened (`ECONNREFUSED`), as a fresh
 * `Error` with only name, message and code: a custom `fetch` may throw an error holding the `init`
 * (whose headers hold the API key) or naming the URL (whose query may hold a phone number).
 */
export function sanitizeCause(error: unknown, redactor: Redactor): Error {
  let current: unknown = error;
  let best: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    best = current;
    if (typeof (current as { code?: unknown }).code === 'string') break;
    current = current.cause;
  }
  const source = best instanceof Error ? best : new Error(String(best));
  const clean = new Error(redactor.scrub(String(source.message).replace(/\?[^\s)'"]*/g, '?…')));
  Object.defineProperty(clean, 'name', { value: source.name, enumerable: false, configurable: true, writable: true });
  const code = (source as { code?: unknown }).code;
  if (typeof code === 'string') Object.assign(clean, { code });
  return clean;
}
