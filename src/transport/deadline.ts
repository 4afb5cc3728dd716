import type { Clock } from '../clock.ts';

/**
 * A signal that aborts when `ms` have passed on `clock` (with `reason()`), or as soon as the caller's
 * `parent` signal aborts (with its reason). One controller fed by a listener: `AbortSignal.any`
 * costs more per call, and its timer would not follow an injected clock.
 */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #cancelTimer: () => void;
  readonly #parent: AbortSignal | undefined;
  readonly #onParentAbort: (() => void) | undefined;

  constructor(clock: Clock, ms: number, parent: AbortSignal | undefined, reason: () => unknown) {
    this.#cancelTimer = clock.setTimeout(() => this.#controller.abort(reason()), ms);
    this.#parent = parent;
    if (parent === undefined) return;
    if (parent.aborted) {
      this.#controller.abort(parent.reason);
      return;
    }
    this.#onParentAbort = () => this.#controller.abort(parent.reason);
    parent.addEventListener('abort', this.#onParentAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The time ran out (not the caller's abort). */
  get expired(): boolean {
    return this.#controller.signal.aborted && !this.#parent?.aborted;
  }

  /** Stops the timer and forgets the caller's signal. */
  dispose(): void {
    this.#cancelTimer();
    if (this.#onParentAbort !== undefined) this.#parent!.removeEventListener('abort', this.#onParentAbort);
  }
}
