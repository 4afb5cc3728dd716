// One manual clock for every suite that drives the sandbox's delivery schedule: time moves only
// when a test says so, and due timers fire in time order.
import type { SandboxClock } from 'integration-sdk/sandbox';

export class ManualClock implements SandboxClock {
  #now: number;
  #timers = new Map<number, { at: number; callback: () => void }>();
  #nextId = 1;

  constructor(start = Date.parse('2026-11-21T12:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
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
