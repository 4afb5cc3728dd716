import * as z from 'zod/mini';
import { createApiError, type ApiError } from '../errors/index.ts';
import { ErrorEnvelopeSchema } from '../schemas/envelope.ts';

export interface Answer {
  status: number;
  headers: Headers;
  /** The body text, already read; parsed here and never kept. */
  text: string;
  retryAfterMs: number | undefined;
  /** The body was larger than the transport reads (`text` is then empty). */
  tooLarge?: boolean;
}

/**
 * A non-2xx answer as its error class (spec part 7). A body that is not the error envelope (an
 * HTML 502 from a proxy, an empty 503) still gets the class of its status family, with the code
 * `HTTP_<status>`.
 */
export function errorFromAnswer(answer: Answer, request: { method: string; path: string }, apiKey: string): ApiError {
  const envelope = z.safeParse(ErrorEnvelopeSchema, parseJson(answer.text));
  const error = envelope.success
    ? envelope.data.error
    : { code: `HTTP_${answer.status}`, message: `the service answered ${answer.status} without an error envelope (a proxy or a wrong baseUrl?)`, details: undefined };
  // A server (or a proxy) may echo the key: in a message, `WWW-Authenticate`, a `Location`.
  const scrub = scrubber(apiKey);
  return createApiError({
    status: answer.status,
    code: scrub(error.code),
    message: scrub(error.message),
    details: scrubDeep(error.details, scrub),
    requestMethod: request.method,
    requestPath: request.path,
    headers: Object.fromEntries([...answer.headers].map(([name, value]) => [name, scrub(value)])),
    retryAfterMs: answer.retryAfterMs,
  });
}

/** Replaces the key, its secret part, and their URL-encoded forms with `[redacted]`. */
function scrubber(apiKey: string): (text: string) => string {
  const secret = apiKey.split('_').slice(2).join('_');
  const needles = [...new Set([apiKey, encodeURIComponent(apiKey), secret, encodeURIComponent(secret)])]
    .filter((needle) => needle.length >= 8)
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let clean = text;
    for (const needle of needles) if (clean.includes(needle)) clean = clean.split(needle).join('[redacted]');
    return clean;
  };
}

function scrubDeep(value: unknown, scrub: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (typeof value !== 'object' || value === null || depth > 20) return value;
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, scrub, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[scrub(key)] = scrubDeep(item, scrub, depth + 1);
  return copy;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
