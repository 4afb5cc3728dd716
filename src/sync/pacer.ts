// A run over an in-memory array never waits on I/O while it judges unchanged items (the state's
// SQLite reads are synchronous), so without a pause it would hold the event loop for the whole
// input: an inbox receiver or a web server in the same process would stop answering. The pacer
// measures work, not business time, so it reads the monotonic clock rather than the clock seam (a
// test's manual clock does not move while work is done).
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work between two turns of the event loop at most, in ms. */
export const TURN_MS = 10;

/** Lets the event loop take a turn once {@link TURN_MS} of work has passed since its last one. */
export class Pacer {
  #since = performance.now();

  /** Whether the work since the last turn is long enough to give one. */
  get due(): boolean {
    return performance.now() - this.#since >= TURN_MS;
  }

  /**
   * Gives the event loop a turn when due. An immediate resolves after the loop's timers and I/O
   * have run once: callbacks queued meanwhile (a timer, a request) are served before the run goes on.
   */
  async pace(): Promise<void> {
    if (!this.due) return;
    await nextTurn();
    this.#since = performance.now();
  }
}
