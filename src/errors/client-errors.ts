import { IntegrationError } from './integration-error.ts';

/**
 * No answer: the connection was refused, reset or dropped. `cause` is a sanitised copy of the
 * low-level error (name, message and `code`: the original can reference the request and the key).
 */
export class ConnectionError extends IntegrationError {
  static override readonly errorName: string = 'ConnectionError';
}

/**
 * An attempt did not finish, body included, within `timeoutMs`; or the call's `totalTimeoutMs` ran
 * out. `cause` is the sanitised abort (a `TimeoutError` naming the limit in milliseconds).
 */
export class TimeoutError extends ConnectionError {
  static override readonly errorName: string = 'TimeoutError';
}

/** Where a 2xx body did not match its schema: paths and messages, never values. */
export interface ResponseIssue {
  path: string;
  message: string;
}

/**
 * A 2xx answer whose body does not match the expected shape (a missing field, a wrong type). Unknown
 * fields and unknown enum values are not errors.
 */
export class ResponseValidationError extends IntegrationError {
  static override readonly errorName: string = 'ResponseValidationError';
  /** Where the body differs from the expected shape: paths and expected types, never values. */
  readonly issues: ResponseIssue[];
  /** HTTP status of the answer (a 2xx). */
  readonly status: number;
  /** HTTP method of the request. */
  readonly requestMethod: string;
  /** Path of the request, without the query string. */
  readonly requestPath: string;

  constructor(init: { issues: ResponseIssue[]; status: number; requestMethod: string; requestPath: string }) {
    const shown = init.issues.slice(0, 5).map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ');
    super(`the ${init.status} answer to ${init.requestMethod} ${init.requestPath} does not match the expected shape: ${shown}${init.issues.length > 5 ? ` (+${init.issues.length - 5} more)` : ''}`);
    this.issues = init.issues;
    this.status = init.status;
    this.requestMethod = init.requestMethod;
    this.requestPath = init.requestPath;
  }
}

/**
 * A whole batch of a bulk write failed after its retries. `partial` holds the merged result of every
 * batch that did succeed, so the caller can tell which items were written; `cause` is the batch's
 * error.
 *
 * @example
 * ```ts
 * try {
 *   await client.catalog.upsertProducts(items);
 * } catch (error) {
 *   if (error instanceof BulkOperationError) console.log(error.partial.results.length, 'items have a result');
 * }
 * ```
 */
export class BulkOperationError<Partial = unknown> extends IntegrationError {
  static override readonly errorName: string = 'BulkOperationError';
  /** The merged result (`{ sync_ids, summary, results }`) of every batch that succeeded. */
  readonly partial: Partial;
  /** The failed batch's error (an `ApiError`, `ConnectionError`…). */
  declare readonly cause: unknown;

  constructor(message: string, init: { partial: Partial; cause: unknown }) {
    super(message, { cause: init.cause });
    this.partial = init.partial;
  }
}

/**
 * A shared rate limiter (e.g. `redisRateLimiter` with `fallback: false`) could not reach its store,
 * so no request was sent. `cause` is a sanitised copy of the store's error.
 *
 * @example
 * ```ts
 * try {
 *   await client.health();
 * } catch (error) {
 *   if (error instanceof RateLimiterUnavailableError) console.warn('Redis is down; try later');
 * }
 * ```
 */
export class RateLimiterUnavailableError extends IntegrationError {
  static override readonly errorName: string = 'RateLimiterUnavailableError';
}
