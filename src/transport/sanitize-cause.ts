import type { Redactor } from './redact.ts';

/**
 * What is kept of a low-level error. Node's fetch throws `TypeError('fetch failed')` whose `cause`
 * is the socket error (with its `code`), but a custom `fetch` may throw anything: an error that
 * holds the `Request` or the `init` it was given (whose headers hold the API key), or whose message
 * names the URL (whose query may hold a phone number). None of that is kept.
 */
export interface SanitizedCause {
  name: string;
  message: string;
  code?: string;
}

/**
 * The innermost error of the `cause` chain that says what happened (e.g. `ECONNREFUSED`), as a
 * fresh `Error` with only name, message (query strings cut out) and code.
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
  const clean = new Error(scrub(String(source.message), redactor));
  Object.defineProperty(clean, 'name', { value: source.name, enumerable: false, configurable: true, writable: true });
  const code = (source as { code?: unknown }).code;
  if (typeof code === 'string') Object.assign(clean, { code });
  return clean;
}

function scrub(message: string, redactor: Redactor): string {
  return redactor.scrub(message.replace(/\?[^\s)'"]*/g, '?…'));
}
