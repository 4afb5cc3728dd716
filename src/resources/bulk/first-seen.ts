// The memory of the repeat rule: every key seen so far and the index of its first occurrence,
// compared exactly (a false repeat would reject a real item). Streams of millions of items keep
// this for the whole run, so keys live outside the JS heap: each one is copied, code unit by code
// unit, into a typed array, and an open-addressing table of typed arrays finds it again. That is
// 30–45 bytes per distinct 11-character key (depending on where the tables are in their doubling),
// against about 64 on the heap for a `Map` (its entry plus the key string), and it is nothing the
// garbage collector has to trace, promote or grow the old generation for: at 1M keys the `Map`
// cost some 150 MB of peak RSS, this about 30–40 MB. A `Map` also stops at about 16.7M entries.
// The caller's strings are never retained, so a key sliced from a large string cannot keep that
// string alive.

/** Keys longer than this (in UTF-16 code units) go to a `Map`, as a copy. Valid keys are shorter. */
const MAX_PACKED_LENGTH = 256;
const INITIAL_ENTRIES = 1024;
/** Arena offsets are `Uint32`: a table holding this many code units stops taking keys. */
const MAX_ARENA_UNITS = 2 ** 32 - 1;
/** Slots are `Int32`, holding entry + 1. */
const MAX_ENTRIES = 2 ** 30;

type Units = Uint8Array | Uint16Array;

/**
 * Keys of one width, packed: `Uint8Array` units for keys whose code units all fit in a byte
 * (Latin-1, which ASCII ids are), `Uint16Array` for the others. A key belongs to exactly one width,
 * so two keys in different tables are never equal.
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

/**
 * A copy of `key` that shares no memory with it: a sliced string would otherwise keep its whole
 * parent string alive for as long as the key is kept.
 */
function detached(key: string): string {
  return JSON.parse(JSON.stringify(key)) as string;
}

/** Exact memory of which keys were seen, and where first. */
export class FirstOccurrences {
  #narrow: PackedKeys | undefined;
  #wide: PackedKeys | undefined;
  /** Long keys, and any key once its packed table is full. */
  #others: Map<string, number> | undefined;

  /**
   * Records `key` as first seen at `index` and returns -1; or, when `key` was seen before, returns
   * the index of its first occurrence and records nothing.
   */
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
