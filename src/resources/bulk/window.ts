// Cuts the input into windows: contiguous runs of input items, each holding at most one batch.
// The repeat rule and the local checks are applied here, as the service would apply them if the
// whole input were one batch.
import { plainCopy } from './field-checks.ts';
import type { ItemResultShape, ItemRules } from './route.ts';

/**
 * A window caps its local rejections so that an input made mostly of invalid items still moves in
 * bounded steps (and memory): a window reaching it closes early, sending a batch below `batchSize`
 * if it holds one.
 */
export const MAX_REJECTED_PER_WINDOW = 10_000;

/** A contiguous part of the input: the batch to send and the items rejected before sending. */
export interface Window<Result> {
  /** Global index of the window's first item. */
  start: number;
  /** Number of input items it covers. */
  size: number;
  /** Items to send: plain copies of the items as checked (never fixed), see {@link plainCopy}. */
  batch: unknown[];
  /** Global index of each item of `batch`. */
  batchIndexes: number[];
  /** Results of the items rejected locally, in input order. */
  rejected: Result[];
}

function emptyWindow<Result>(start: number): Window<Result> {
  return { start, size: 0, batch: [], batchIndexes: [], rejected: [] };
}

/**
 * Takes input items one by one and hands back each window as soon as it closes: when its batch
 * holds `batchSize` items (so the batch can be sent at once), when it reaches
 * {@link MAX_REJECTED_PER_WINDOW} rejections, or when the input ends.
 */
export class WindowBuilder<Result extends ItemResultShape> {
  readonly #rules: ItemRules<Result>;
  readonly #batchSize: number;
  /** Repeat keys already seen and the index of their first occurrence: all that is kept across windows. */
  readonly #seen = new Map<string, number>();
  #current: Window<Result> = emptyWindow(0);

  constructor(rules: ItemRules<Result>, batchSize: number) {
    this.#rules = rules;
    this.#batchSize = batchSize;
  }

  /** Adds the next input item; returns the window it closed, if any. */
  add(item: unknown): Window<Result> | undefined {
    const window = this.#current;
    const index = window.start + window.size;
    window.size += 1;
    // What is checked is what is sent: the plain copy. An item that has none (a cycle, a BigInt…)
    // is judged as given, so that a known field's own problem is still the one reported.
    const checked = plainCopy(item);
    const judged = checked.ok ? checked.value : item;
    const problem = this.#repeatProblem(judged, index) ?? this.#rules.problem(judged) ?? (checked.ok ? undefined : checked.problem);
    if (problem === undefined) {
      window.batch.push(judged);
      window.batchIndexes.push(index);
    } else {
      window.rejected.push(this.#rules.rejected(index, item, problem));
    }
    const full = window.batch.length >= this.#batchSize || window.rejected.length >= MAX_REJECTED_PER_WINDOW;
    return full ? this.#close() : undefined;
  }

  /** The input has ended: returns the last window, unless it is empty. */
  finish(): Window<Result> | undefined {
    return this.#current.size > 0 ? this.#close() : undefined;
  }

  /** The first occurrence of a key is judged like any item; later ones are repeats. */
  #repeatProblem(item: unknown, index: number): string | undefined {
    const key = this.#rules.repeatKey(item);
    if (key === undefined) return undefined;
    const firstIndex = this.#seen.get(key);
    if (firstIndex === undefined) {
      this.#seen.set(key, index);
      return undefined;
    }
    return this.#rules.repeatMessage(item, firstIndex);
  }

  #close(): Window<Result> {
    const closed = this.#current;
    this.#current = emptyWindow(closed.start + closed.size);
    return closed;
  }
}
