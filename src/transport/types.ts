import type * as z from 'zod/mini';
import type { IntegrationError } from '../errors/index.ts';

/**
 * The last, optional argument of every client method: overrides the client's settings for one call.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * await client.orders.get(id, { signal: controller.signal, timeoutMs: 5_000, maxRetries: 0 });
 * ```
 */
export interface CallOptions {
  /**
   * Aborting it stops the call at once, waits and the rate-limit queue included. The call then
   * rejects with `signal.reason` (a `DOMException` named `AbortError` for a plain `abort()`).
   *
   * @example
   * ```ts
   * await client.health({ signal: AbortSignal.timeout(2_000) });
   * ```
   */
  signal?: AbortSignal;
  /**
   * Per attempt, reading the whole body included. Defaults to the client's `timeoutMs`.
   *
   * @example
   * ```ts
   * await client.webhooks.list({ timeoutMs: 5_000 });
   * ```
   */
  timeoutMs?: number;
  /**
   * All attempts and waits of this call together (not the time queued behind the client's own
   * rate limiter). Defaults to the client's `totalTimeoutMs`.
   *
   * @example
   * ```ts
   * await client.loyalty.balance({ phone: '+55 11 91234-5678' }, { totalTimeoutMs: 10_000 });
   * ```
   */
  totalTimeoutMs?: number;
  /**
   * Retries after the first attempt. Defaults to the client's `maxRetries`.
   *
   * @example
   * ```ts
   * await client.orders.get(id, { maxRetries: 0 }); // one attempt only
   * ```
   */
  maxRetries?: number;
}

/**
 * How a request may be repeated when an attempt fails:
 * - `safe`: repeating it cannot act twice (GET, DELETE, absolute writes). Retried on connection
 *   failures, time-outs, 429, 500, 502, 504, and 503 but `FEATURE_DISABLED`.
 * - `idempotency-key`: the body carries an `idempotency_key`. As `safe`, plus 409 `CONFLICT`.
 * - `unsafe`: could act twice (POST /webhooks, POST /webhooks/{id}/test). Retried only when the
 *   request cannot have been processed: connection refused before sending, 429, 503.
 */
export type RetryMode = 'safe' | 'idempotency-key' | 'unsafe';

/** The methods `client.request` accepts. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request as resources hand it to the transport (what `Requester.send` takes). */
export interface RequestSpec<T> {
  method: HttpMethod;
  /** Relative to `/integration/v1`, e.g. `/products/bulk`. */
  path: string;
  /** The route template of `path` (`/orders/{id}`), what diagnostics publish: required when `path` holds an id. */
  route?: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Validates a 2xx body (tolerant schemas). Absent: the body is not read as a result (`undefined`). */
  schema?: z.ZodMiniType<T>;
  retry: RetryMode;
  options?: CallOptions;
  /**
   * The 2xx answer may echo what was sent (a bulk item error quoting a field): the API key is
   * scrubbed from its text, in every encoding, before it is parsed. Error answers always are.
   */
  scrubAnswer?: boolean;
  /** An error that, met on a retry, means an earlier attempt did the work (a DELETE meeting 404): resolves `undefined`. */
  alreadyDoneOnRetry?: (error: IntegrationError) => boolean;
  /**
   * Called as each attempt is handed to `fetch`: from then on the service may have the request. A
   * call aborted before the first one was never sent (it was still queued behind the rate limiter).
   */
  onSend?: () => void;
}

/** What resources call: one request through auth, throttle, retry, deadlines and error mapping. */
export interface Requester {
  send<T>(spec: RequestSpec<T>): Promise<T>;
}
