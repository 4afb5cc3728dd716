import { ConfigurationError } from '../errors/integration-error.ts';

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
