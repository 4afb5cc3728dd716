// Reads the caller's input (array, Iterable or AsyncIterable) and turns it into windows, reading
// no further than the window being asked for: a stream is never buffered beyond what the batches
// in flight need.
import { InvalidInputError } from '../../errors/index.ts';
import { abortable } from './abort.ts';
import { kindOf } from './field-checks.ts';
import type { ItemResultShape } from './route.ts';
import type { BulkInput } from './types.ts';
import type { Window, WindowBuilder } from './window.ts';

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
