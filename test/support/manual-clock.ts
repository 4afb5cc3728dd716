// The one fake of the clock seam (`Clock` of src/clock.ts, which the sandbox's clock also accepts):
// time moves only when a test says so, and due timers fire in time order. `setTimeout` returns its
// cancel function, which is also the handle `clearTimeout` takes.
import type { Clock } from 'integration-sdk';
import type { SandboxClock } from 'integration-sdk/sandbox';

export class ManualClock implements Clock, SandboxClock {
  #now: number;
  #timers = new Map<number, { at: number; callback: () => void }>();
  #nextId = 1;

  constructor(start = Date.parse('2026-11-21T12:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): () => void {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback });
    return () => void this.#timers.delete(id);
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === 'function') (handle as () => void)();
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].callback();
    }
    this.#now = end;
  }
}
