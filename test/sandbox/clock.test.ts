import { describe, expect, test, vi } from 'vitest';
import { clockOf } from '../../src/sandbox/clock.ts';
import { systemClock } from '../../src/clock.ts';
import { ManualClock } from './helpers.ts';

describe('the sandbox clock option as the one Clock seam', () => {
  test('a clock with handles and clearTimeout is adapted: the cancel function clears its handle', () => {
    const manual = new ManualClock();
    const fired = vi.fn();
    const clock = clockOf(manual);
    const cancel = clock.setTimeout(fired, 1000);
    expect(manual.pendingTimers).toBe(1);
    cancel();
    manual.advance(2000);
    expect([manual.pendingTimers, fired.mock.calls.length]).toEqual([0, 0]);
    expect(clock.now()).toBe(manual.now());
  });

  test("a Clock of src/clock.ts (setTimeout returns a cancel function) is used as is", () => {
    const cancels: Array<() => void> = [];
    const own = { now: () => 42, setTimeout: () => { const cancel = vi.fn(); cancels.push(cancel); return cancel; } };
    clockOf(own).setTimeout(() => {}, 10)();
    expect(cancels[0]).toHaveBeenCalledOnce();
  });

  test('left out, it is the system clock', () => {
    expect(clockOf(undefined)).toBe(systemClock);
  });
});
