import { ConfigurationError } from '../errors/integration-error.ts';
import { fail } from './fail.ts';

const DIGITS = /^[0-9]+$/;

/**
 * The `X-Service-Timestamp` value as epoch seconds. Only plain ASCII digits count as an integer:
 * `1.5e9`, `1795002201.0`, a sign or surrounding spaces are refused rather than guessed at.
 */
export function readTimestamp(value: string): number {
  const seconds = DIGITS.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seconds)) {
    fail(
      'invalid_timestamp',
      'X-Service-Timestamp is not integer epoch seconds: pass the header value exactly as received.',
    );
  }
  return seconds;
}

/** Rejects a delivery signed too long ago (a replay) or too far ahead (a wrong clock): both directions. */
export function checkTolerance(timestamp: number, nowSeconds: number, toleranceSeconds: number): void {
  const age = nowSeconds - timestamp;
  if (Math.abs(age) <= toleranceSeconds) return;
  const when = age > 0 ? `${age} s in the past` : `${-age} s in the future`;
  fail(
    'timestamp_out_of_tolerance',
    `X-Service-Timestamp is ${when}, outside the ${toleranceSeconds} s tolerance: check the server clock (NTP), and verify on arrival, not later from a queue.`,
  );
}

/** Spec 6.2 and 8: the recommended window is 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The current time in whole epoch seconds, floored like the timestamps the service sends. */
export function epochSeconds(now: Date | number | undefined): number {
  const ms = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new ConfigurationError('now must be a valid Date or epoch milliseconds (as Date.now() gives).');
  }
  return Math.floor(ms / 1000);
}

/** `toleranceSeconds` checked once, so that a NaN can never accept every timestamp. */
export function toleranceOf(toleranceSeconds: number | undefined): number {
  const tolerance = toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new ConfigurationError('toleranceSeconds must be a number >= 0.');
  }
  return tolerance;
}
