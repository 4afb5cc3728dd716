import { IntegrationError } from '../errors/index.ts';

/**
 * The shared rate limiter could not reach Redis and was built with `fallback: false`: the call
 * was not sent. Retry later, or allow the in-process fallback.
 *
 * @example
 * ```ts
 * try {
 *   await client.health();
 * } catch (error) {
 *   if (error instanceof RateLimiterUnavailableError) scheduleRetry();
 * }
 * ```
 */
export class RateLimiterUnavailableError extends IntegrationError {
  static override readonly errorName: string = 'RateLimiterUnavailableError';
}
