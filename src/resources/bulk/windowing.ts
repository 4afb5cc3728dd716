// Cuts the input into windows (runs of items holding at most one batch), checked as the service would
// check one batch of the whole input, and reads no further than the window asked for.
import { raceAbort } from '../../clock.ts';
import { InvalidInputError } from '../../errors/index.ts';
import { kindOf, plainCopy, UNREADABLE_ITEM, type Checked } from './item-checks.ts';
import type { BulkInput, ItemResultShape, ItemRules } from './types.ts';

/** Caps a window's local rejections: an input of mostly invalid items still moves in bounded steps. */
const MAX_REJECTED_PER_WINDOW = 10_000;

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

/** Takes input items one by one; a window closes at `batchSize` items to send, at the rejection cap, or at the end. */
export class WindowBuilder<Result extends ItemResultShape> {
  readonly #rules: ItemRules<Result>;
  readonly #batchSize: number;
  /** Repeat keys seen and their first index: all that is kept across windows (see {@link FirstOccurrences}). */
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
    // What is checked is what is sent; an item with no plain copy is judged as given, so that a
    // known field's own problem is still the one reported.
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

  /** Why an item is refused, if it is; a getter throwing here refuses the item, not the whole call. */
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
        const step = isThenable(pending) ? await raceAbort(Promise.resolve(pending), signal) : pending;
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

// The memory of the repeat rule, compared exactly (a false repeat would reject a real item). A
// stream keeps it for the whole run, so keys are copied into typed arrays outside the JS heap,
// found again by an open-addressing table: 30–45 bytes per 11-character key against about 64 for a
// `Map`, and nothing for the GC to trace. Measured at 1M keys: the `Map` cost some 150 MB of peak
// RSS, this 30–40 MB. A `Map` also stops at about 16.7M entries. Caller strings are never retained.

/** Keys longer than this (in UTF-16 code units) go to a `Map`, as a copy. Valid keys are shorter. */
const MAX_PACKED_LENGTH = 256;
const INITIAL_ENTRIES = 1024;
/** Arena offsets are `Uint32`: a table holding this many code units stops taking keys. */
const MAX_ARENA_UNITS = 2 ** 32 - 1;
/** Slots are `Int32`, holding entry + 1. */
const MAX_ENTRIES = 2 ** 30;

type Units = Uint8Array | Uint16Array;

/**
 * Keys of one width, packed: `Uint8Array` units for keys whose code units all fit in a byte (ASCII
 * ids do), `Uint16Array` for the others. Keys in different tables are never equal.
 */
class PackedKeys {
  readonly #wide: boolean;
  /** The code units of every key, one after the other. */
  #units: Units;
  #unitsUsed = 0;
  /** Per entry: where its key ends in `#units` (it starts where the previous one ends). */
  #ends = new Uint32Array(INITIAL_ENTRIES);
  /** Per entry: the key's hash, to skip most comparisons. */
  #hashes = new Int32Array(INITIAL_ENTRIES);
  /** Per entry: the index of the key's first occurrence (`Float64Array` once one needs 33 bits). */
  #firsts: Uint32Array | Float64Array = new Uint32Array(INITIAL_ENTRIES);
  #count = 0;
  /** Open addressing, linear probing, at most half full: entry + 1, or 0 when free. */
  #slots = new Int32Array(INITIAL_ENTRIES * 2);

  constructor(wide: boolean) {
    this.#wide = wide;
    this.#units = wide ? new Uint16Array(INITIAL_ENTRIES * 16) : new Uint8Array(INITIAL_ENTRIES * 16);
  }

  /** Whether a key of this length can still be added. */
  hasRoomFor(length: number): boolean {
    return this.#count < MAX_ENTRIES && this.#unitsUsed + length <= MAX_ARENA_UNITS;
  }

  /** The first index of `key` if it is here; otherwise -1. */
  find(key: string, hash: number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[slot]!;
      if (stored === 0) return -1;
      if (this.#hashes[stored - 1] === hash && this.#equals(stored - 1, key)) return this.#firsts[stored - 1]!;
    }
  }

  /** Adds a key known not to be here (call {@link find} first, and {@link hasRoomFor}). */
  add(key: string, hash: number, index: number): void {
    const entry = this.#count;
    if (entry === this.#ends.length) this.#growEntries();
    if ((entry + 1) * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
    const length = key.length;
    const start = this.#unitsUsed;
    if (start + length > this.#units.length) this.#growUnits(start + length);
    const units = this.#units;
    for (let i = 0; i < length; i += 1) units[start + i] = key.charCodeAt(i);
    this.#unitsUsed = start + length;
    this.#ends[entry] = start + length;
    this.#hashes[entry] = hash;
    if (index > 0xffffffff && this.#firsts instanceof Uint32Array) this.#firsts = Float64Array.from(this.#firsts);
    this.#firsts[entry] = index;
    this.#count = entry + 1;
    this.#place(this.#slots, entry, hash);
  }

  #equals(entry: number, key: string): boolean {
    const start = entry === 0 ? 0 : this.#ends[entry - 1]!;
    const end = this.#ends[entry]!;
    const length = key.length;
    if (end - start !== length) return false;
    const units = this.#units;
    // From the end: generated ids tend to share their beginning.
    for (let i = length - 1; i >= 0; i -= 1) if (units[start + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  #place(slots: Int32Array, entry: number, hash: number): void {
    const mask = slots.length - 1;
    let slot = hash & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = entry + 1;
  }

  #rehash(size: number): void {
    const slots = new Int32Array(size);
    for (let entry = 0; entry < this.#count; entry += 1) this.#place(slots, entry, this.#hashes[entry]!);
    this.#slots = slots;
  }

  #growEntries(): void {
    const size = this.#ends.length * 2;
    const ends = new Uint32Array(size);
    ends.set(this.#ends);
    this.#ends = ends;
    const hashes = new Int32Array(size);
    hashes.set(this.#hashes);
    this.#hashes = hashes;
    const firsts = this.#firsts instanceof Uint32Array ? new Uint32Array(size) : new Float64Array(size);
    firsts.set(this.#firsts);
    this.#firsts = firsts;
  }

  #growUnits(needed: number): void {
    let size = this.#units.length * 2;
    while (size < needed) size *= 2;
    size = Math.min(size, MAX_ARENA_UNITS);
    const units = this.#wide ? new Uint16Array(size) : new Uint8Array(size);
    units.set(this.#units.subarray(0, this.#unitsUsed));
    this.#units = units;
  }
}

/** A copy of `key` sharing no memory with it: a sliced string would keep its whole parent alive. */
function detached(key: string): string {
  return JSON.parse(JSON.stringify(key)) as string;
}

/** Exact memory of which keys were seen, and where first. */
export class FirstOccurrences {
  #narrow: PackedKeys | undefined;
  #wide: PackedKeys | undefined;
  /** Long keys, and any key once its packed table is full. */
  #others: Map<string, number> | undefined;

  /** Records `key` as first seen at `index` and returns -1, or returns the index it was first seen at. */
  claim(key: string, index: number): number {
    const length = key.length;
    if (length <= MAX_PACKED_LENGTH) {
      // FNV-1a over the UTF-16 code units, noting whether any needs more than a byte.
      let hash = 0x811c9dc5 | 0;
      let all = 0;
      for (let i = 0; i < length; i += 1) {
        const unit = key.charCodeAt(i);
        all |= unit;
        hash = Math.imul(hash ^ unit, 0x01000193);
      }
      let table: PackedKeys;
      if (all <= 0xff) table = this.#narrow ??= new PackedKeys(false);
      else table = this.#wide ??= new PackedKeys(true);
      const first = table.find(key, hash);
      if (first !== -1) return first;
      if (table.hasRoomFor(length)) {
        table.add(key, hash, index);
        return -1;
      }
    }
    const others = (this.#others ??= new Map());
    const first = others.get(key);
    if (first !== undefined) return first;
    others.set(detached(key), index);
    return -1;
  }
}
