import { ApiError, ConnectionError, TimeoutError, type IntegrationError } from '../errors/index.ts';
import type { RetryMode } from './types.ts';

/** Backoff base and cap (surface doc, "Retries and rate limit"). */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

/**
 * Exponential backoff with full jitter: anywhere between 0 and `min(8 s, 0.5 s × 2^retryIndex)`,
 * so that clients failing together do not retry together. `retryIndex` is 0 before the first retry.
 */
export function backoffDelay(retryIndex: number, random: () => number): number {
  return random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retryIndex);
}

/**
 * Socket error codes meaning no connection was ever made, so the service cannot have seen the
 * request. A reset, a broken pipe or a time-out may come after the request was processed.
 */
const NEVER_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export function neverReachedService(error: IntegrationError): boolean {
  if (!(error instanceof ConnectionError) || error instanceof TimeoutError) return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && NEVER_CONNECTED_CODES.has(code);
}

/** Whether a failed attempt may be repeated under `mode` (surface doc, "Retries and rate limit"). */
export function isRetryable(error: IntegrationError, mode: RetryMode): boolean {
  if (mode === 'unsafe') {
    // Only failures proving the request was not processed: repeating it cannot act twice.
    if (error instanceof ApiError) return error.status === 429 || (error.status === 503 && error.code !== 'FEATURE_DISABLED');
    return neverReachedService(error);
  }
  if (error instanceof ConnectionError) return true; // time-outs included
  if (!(error instanceof ApiError)) return false;
  switch (error.status) {
    case 429:
    case 500:
    case 502: // a gateway in front of the service: its failure, or the service's
    case 504:
      return true;
    case 503:
      return error.code !== 'FEATURE_DISABLED'; // a setting, not a fault
    case 409:
      return mode === 'idempotency-key' && error.code === 'CONFLICT'; // the key makes the repeat safe
    default:
      return false;
  }
}
