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
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
