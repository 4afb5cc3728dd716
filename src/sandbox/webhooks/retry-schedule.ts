/** Spec 6.4: seconds to wait after the failure of attempt 1, 2, 3, 4, 5. */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 43200] as const;

/** Spec 6.4: attempt 6 is the last; its failure makes the delivery `dead`. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** Spec 6.3 rule 4: a 2xx within 10 seconds. */
export const ANSWER_LIMIT_MS = 10_000;

/**
 * A scaled answer limit shorter than this would fail even a healthy local receiver, so scaling
 * stops here unless `deliveryTimeoutMs` is given explicitly.
 */
export const MIN_SCALED_ANSWER_LIMIT_MS = 1_000;

/** Milliseconds to wait after attempt `attempt` (1-based) failed, or null when it was the last. */
export function retryDelayMs(attempt: number, timeScale: number): number | null {
  const seconds = RETRY_DELAYS_SECONDS[attempt - 1];
  return seconds === undefined ? null : seconds * 1000 * timeScale;
}
