import type { Clock } from '../../../src/clock.ts';

/** A clock whose timers fire only when the test says so: time bounds without real waiting. */
export function manualClock(): Clock & { fire(): void; pending(): number } {
  const timers = new Set<() => void>();
  return {
    now: () => 0,
    setTimeout(callback) {
      timers.add(callback);
      return () => timers.delete(callback);
    },
    fire() {
      const due = [...timers];
      timers.clear();
      for (const callback of due) callback();
    },
    pending: () => timers.size,
  };
}
