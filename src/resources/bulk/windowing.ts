// Cuts the input into windows: contiguous runs of input items, each holding at most one batch.
// The repeat rule and the local checks are applied here, as the service would apply them if the
// whole input were one batch.
//
// Reads the caller's input (array, Iterable or AsyncIterable) and turns it into windows, reading
// no further than the window being asked for: a stream is never buffered beyond what the batches
// in flight need.
import { InvalidInputError } from '../../errors/index.ts';
import { kindOf, plainCopy, UNREADABLE_ITEM, type Checked } from './field-checks.ts';
import { FirstOccurrences } from './first-seen.ts';
import type { ItemResultShape, ItemRules } from './route.ts';
import { abortable } from './run.ts';
import type { BulkInput } from './types.ts';

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
  /**
   * Repeat keys already seen and the index of their first occurrence: all that is kept across
   * windows, packed outside the JS heap ({@link FirstOccurrences}): with a plain `Map` the stream
   * figure measured 433 MB peak RSS at 1M items against 318 MB for a raw fetch loop (1.36×).
   */
  readonly #seen = new FirstOccurrences();
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
    const problem = checked.ok || !checked.unreadable ? this.#problemOf(judged, index, checked) : checked.problem;
    if (problem === undefined) {
      window.batch.push(judged);
      window.batchIndexes.push(index);
    } else {
      window.rejected.push(this.#rejected(index, judged, problem));
    }
    const full = window.batch.length >= this.#batchSize || window.rejected.length >= MAX_REJECTED_PER_WINDOW;
    return full ? this.#close() : undefined;
  }

  /** The input has ended: returns the last window, unless it is empty. */
  finish(): Window<Result> | undefined {
    return this.#current.size > 0 ? this.#close() : undefined;
  }

  /**
   * Why an item is refused, if it is. An item that has no plain copy is judged as given, where a
   * getter may still throw: it is then refused as unreadable, not the whole call.
   */
  #problemOf(judged: unknown, index: number, checked: Checked): string | undefined {
    try {
      return this.#repeatProblem(judged, index) ?? this.#rules.problem(judged) ?? (checked.ok ? undefined : checked.problem);
    } catch {
      return UNREADABLE_ITEM;
    }
  }

  /** The item's error result; one that cannot be read for its ids gets them empty. */
  #rejected(index: number, item: unknown, problem: string): Result {
    try {
      return this.#rules.rejected(index, item, problem);
    } catch {
      return this.#rules.rejected(index, {}, problem);
    }
  }

  /** The first occurrence of a key is judged like any item; later ones are repeats. */
  #repeatProblem(item: unknown, index: number): string | undefined {
    const key = this.#rules.repeatKey(item);
    if (key === undefined) return undefined;
    const firstIndex = this.#seen.claim(key, index);
    return firstIndex === -1 ? undefined : this.#rules.repeatMessage(item, firstIndex);
  }

  #close(): Window<Result> {
    const closed = this.#current;
    this.#current = emptyWindow(closed.start + closed.size);
    return closed;
  }
}

/** Windows of the input, in input order. */
export interface WindowSource<Result> {
  /** The input's length when it is an array. */
  readonly itemsTotal: number | undefined;
  /** Windows holding a batch, when the input is an array (it is cut up front to count them). */
  readonly batchesTotal: number | undefined;
  /** Index of the first item not yet handed out in a window. */
  readonly windowedUpTo: number;
  /** The next window, or `undefined` at the end of the input. Rejects with the input's own error. */
  next(): Promise<Window<Result> | undefined>;
  /** Stops reading: calls the input iterator's `return()` without waiting for it. */
  close(): void;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | undefined)?.then === 'function';
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function';
}

/** Throws `InvalidInputError` for anything that is not a list of items (a string included). */
export function checkInput(items: unknown): asserts items is BulkInput<unknown> {
  if (Array.isArray(items) || isAsyncIterable(items) || isIterable(items)) return;
  throw new InvalidInputError([{ path: 'items', message: `must be an array, an Iterable or an AsyncIterable of items, got ${kindOf(items)}` }]);
}

export function openWindows<Result extends ItemResultShape>(
  items: BulkInput<unknown>,
  builder: WindowBuilder<Result>,
  signal: AbortSignal | undefined,
): WindowSource<Result> {
  return Array.isArray(items) ? fromArray(items, builder) : fromIterator(items, builder, signal);
}

/** An array is already in memory: cutting it up front costs little and gives `batchesTotal`. */
function fromArray<Result extends ItemResultShape>(items: readonly unknown[], builder: WindowBuilder<Result>): WindowSource<Result> {
  const windows: (Window<Result> | undefined)[] = [];
  for (const item of items) {
    const closed = builder.add(item);
    if (closed) windows.push(closed);
  }
  const last = builder.finish();
  if (last) windows.push(last);
  let position = 0;
  let windowedUpTo = 0;
  return {
    itemsTotal: items.length,
    batchesTotal: windows.filter((window) => window!.batch.length > 0).length,
    get windowedUpTo() {
      return windowedUpTo;
    },
    next: async () => {
      const window = windows[position];
      if (!window) return undefined;
      windows[position] = undefined; // handed out: let it go once its results are used
      position += 1;
      windowedUpTo = window.start + window.size;
      return window;
    },
    close: () => {},
  };
}

function fromIterator<Result extends ItemResultShape>(
  items: Iterable<unknown> | AsyncIterable<unknown>,
  builder: WindowBuilder<Result>,
  signal: AbortSignal | undefined,
): WindowSource<Result> {
  const iterator: Iterator<unknown> | AsyncIterator<unknown> = isAsyncIterable(items)
    ? items[Symbol.asyncIterator]()
    : items[Symbol.iterator]();
  let ended = false;
  let windowedUpTo = 0;

  const handOut = (window: Window<Result> | undefined) => {
    if (window) windowedUpTo = window.start + window.size;
    return window;
  };

  return {
    itemsTotal: undefined,
    batchesTotal: undefined,
    get windowedUpTo() {
      return windowedUpTo;
    },
    async next() {
      while (!ended) {
        const pending = iterator.next();
        // A sync iterator's step is used as is: awaiting every item would cost a turn per item.
        const step = isThenable(pending) ? await abortable(Promise.resolve(pending), signal) : pending;
        if (step.done) {
          ended = true;
          return handOut(builder.finish());
        }
        const closed = builder.add(step.value);
        if (closed) return handOut(closed);
      }
      return undefined;
    },
    close() {
      if (ended) return;
      ended = true;
      try {
        const closing = iterator.return?.();
        if (isThenable(closing)) Promise.resolve(closing).catch(() => {});
      } catch {
        // The input failing to close is not worth hiding the error that made us stop.
      }
    },
  };
}
