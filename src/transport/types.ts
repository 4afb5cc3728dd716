import type * as z from 'zod/mini';

/** The last, optional argument of every client method. */
export interface CallOptions {
  /** Aborting it stops the call at once, waits included. */
  signal?: AbortSignal;
  /** Per attempt, reading the whole body included. */
  timeoutMs?: number;
  /** All attempts and waits of this call together. */
  totalTimeoutMs?: number;
  /** Retries after the first attempt. */
  maxRetries?: number;
}

/**
 * How a request may be repeated when an attempt fails:
 * - `safe`: repeating it cannot act twice (GET, DELETE, absolute writes such as PATCH /stock and
 *   the bulk upsert). Retried on connection failures, time-outs, 500, 503 (not FEATURE_DISABLED), 429.
 * - `idempotency-key`: the body carries an `idempotency_key` the service deduplicates on. As `safe`,
 *   plus 409 `CONFLICT`.
 * - `unsafe`: could act twice (POST /webhooks, POST /webhooks/{id}/test). Retried only when the
 *   request cannot have been processed: connection refused before sending, 429, 503.
 */
export type RetryMode = 'safe' | 'idempotency-key' | 'unsafe';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestSpec<T> {
  method: HttpMethod;
  /** Relative to `/integration/v1`, e.g. `/products/bulk`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Validates a 2xx body (tolerant schemas). Absent: the body is not read as a result (`undefined`). */
  schema?: z.ZodMiniType<T>;
  retry: RetryMode;
  options?: CallOptions;
}

/** What resources call: one request through auth, throttle, retry, deadlines and error mapping. */
export interface Requester {
  send<T>(spec: RequestSpec<T>): Promise<T>;
}
