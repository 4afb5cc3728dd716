import { systemClock, type Clock } from '../clock.ts';

/**
 * What the sandbox's `clock` option accepts: the SDK's own {@link Clock} (`setTimeout` returns a
 * cancel function), so one fake clock drives client and sandbox alike, or a clock whose
 * `setTimeout` returns a handle for its `clearTimeout` (the shape of the globals and of earlier
 * versions). Inside, the sandbox only ever sees a `Clock`.
 */
export interface SandboxClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` after `ms`; returns a cancel function, or a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout?(handle: unknown): void;
}

/** The `clock` option as the one clock seam of `src/clock.ts`; the system clock when left out. */
export function clockOf(option: SandboxClock | undefined): Clock {
  if (option === undefined) return systemClock;
  return {
    now: () => option.now(),
    setTimeout(callback, ms) {
      const handle = option.setTimeout(callback, ms);
      if (option.clearTimeout) return () => option.clearTimeout?.(handle);
      return typeof handle === 'function' ? (handle as () => void) : () => {};
    },
  };
}

/** ISO 8601 UTC with milliseconds, as every timestamp of the wire. */
export function isoAt(clock: Clock, offsetMs = 0): string {
  return new Date(clock.now() + offsetMs).toISOString();
}
