import * as z from 'zod/mini';
import { createApiError, type ApiError } from '../errors/index.ts';
import { ErrorEnvelopeSchema } from '../schemas/envelope.ts';
import type { Redactor } from './redact.ts';

export interface Answer {
  status: number;
  headers: Headers;
  /** The body text, already read; parsed here and never kept. */
  text: string;
  retryAfterMs: number | undefined;
}

/**
 * A non-2xx answer as its error class (spec part 7). A body that is not the error envelope (a
 * proxy's HTML 502) gets the class of its status family, with the code `HTTP_<status>`.
 */
export function errorFromAnswer(answer: Answer, request: { method: string; path: string }, redactor: Redactor): ApiError {
  // A server may echo the key, escaped or encoded: it is cut out of the text, then of every parsed string.
  const envelope = z.safeParse(ErrorEnvelopeSchema, redactor.scrubValue(parseJson(redactor.scrub(answer.text))));
  const error = envelope.success
    ? envelope.data.error
    : { code: `HTTP_${answer.status}`, message: `the service answered ${answer.status} without an error envelope (a proxy or a wrong baseUrl?)`, details: undefined };
  return createApiError({
    status: answer.status,
    code: error.code,
    message: error.message,
    details: error.details,
    requestMethod: request.method,
    requestPath: request.path,
    headers: Object.fromEntries([...answer.headers].map(([name, value]) => [name, redactor.scrub(value)])),
    retryAfterMs: answer.retryAfterMs,
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
