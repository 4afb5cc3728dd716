/**
 * Where the client reports what it does; `console` fits. It never receives the key, a secret, a
 * body or a query value: only method, path, status, attempt and timings.
 *
 * @example
 * ```ts
 * const client = new IntegrationClient({ apiKey, baseUrl, logger: console });
 * // debug: integration-sdk attempt { method: 'GET', path: '/integration/v1/health', status: 200, attempt: 1, ms: 41 }
 * ```
 */
export interface Logger {
  /** One line per attempt: method, path without query, status or error name, attempt, ms. */
  debug(message: string, fields?: Record<string, unknown>): void;
  /** Not used by the client today; part of the usual logger shape. */
  info(message: string, fields?: Record<string, unknown>): void;
  /** A 429 that pauses every call of the client. */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** Not used by the client today; part of the usual logger shape. */
  error(message: string, fields?: Record<string, unknown>): void;
}
