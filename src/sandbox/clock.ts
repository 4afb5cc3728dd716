/**
 * Time as the sandbox sees it. Injected so that the retry schedule, the answer limit of
 * deliveries and the token buckets can be driven exactly by a test, without real sleeps.
 *
 * `clearTimeout` may be left out when `setTimeout` returns a cancel function (the shape of the
 * client's own clock), so one fake clock can drive both sides.
 */
export interface SandboxClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` after `ms`; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout?(handle: unknown): void;
}

/** Reads the globals at call time, so `vi.useFakeTimers()` installed later still takes effect. */
export const systemClock: SandboxClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Cancels a timer made by `clock.setTimeout`, whichever of the two clock shapes it has. */
export function cancelTimer(clock: SandboxClock, handle: unknown): void {
  if (clock.clearTimeout) clock.clearTimeout(handle);
  else if (typeof handle === 'function') (handle as () => void)();
}

/** ISO 8601 UTC with milliseconds, as every timestamp of the wire. */
export function isoAt(clock: SandboxClock, offsetMs = 0): string {
  return new Date(clock.now() + offsetMs).toISOString();
}
