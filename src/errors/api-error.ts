import { IntegrationError } from './integration-error.ts';

/** What the SDK knows about the failed request; never its body or its headers. */
export interface ApiErrorInit {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  requestMethod: string;
  /** Path without the query string: queries can carry a customer's phone number. */
  requestPath: string;
  headers?: Record<string, string>;
}

/**
 * An error envelope `{ error: { code, message, details? } }` answered by the service (spec 2.10).
 * Every service error is an `ApiError`; known codes get a subclass (see `createApiError`), and an
 * unknown `code` stays an `ApiError` carrying that `code`.
 *
 * @example
 * ```ts
 * try {
 *   await client.orders.get(id);
 * } catch (error) {
 *   if (error instanceof ApiError) console.log(error.status, error.code, error.requestPath);
 * }
 * ```
 */
export class ApiError extends IntegrationError {
  static override readonly errorName: string = 'ApiError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** The envelope's `error.code`, e.g. `VALIDATION_ERROR`. */
  readonly code: string;
  /** The envelope's `error.details`; `undefined` when the service sent none (it never sends null). */
  readonly details: unknown;
  /** HTTP method of the failed request, e.g. `GET`. */
  readonly requestMethod: string;
  /** Path of the request relative to the host, without the query string. */
  readonly requestPath: string;
  /** Response headers, lower-case names. */
  readonly headers: Record<string, string>;

  constructor(init: ApiErrorInit) {
    super(`${init.status} ${init.code}: ${init.message} (${init.requestMethod} ${init.requestPath})`);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestMethod = init.requestMethod;
    this.requestPath = init.requestPath;
    this.headers = init.headers ?? {};
  }
}
