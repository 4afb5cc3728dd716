// The push's duplicate rule across a whole file, in memory far below one entry per distinct id (a
// 1 GB file holds millions of them). The first pass screens every key through a Bloom filter and
// keeps, exactly, the keys it may have met before: every real repeat, plus false positives (about
// 1%). A key that is not a candidate occurs once in the file, so the pass that applies the rule
// remembers first lines only for the candidates. Exact, never lossy: a false positive only costs a
// map entry. A Bloom filter is a few lines over a typed array; the packages that offer one bring
// dependencies or keep bits in plain arrays, so it is written here.

/** Bits per key of the first layer (about 0.8% false positives with 7 hashes); later layers use more. */
const BITS_PER_KEY = 10;
const MIN_CAPACITY = 1 << 16;

class BloomLayer {
  readonly #bits: Uint32Array;
  readonly #size: number;
  readonly #hashes: number;
  readonly capacity: number;
  count = 0;

  constructor(capacity: number, bitsPerKey: number) {
    this.capacity = capacity;
    this.#size = capacity * bitsPerKey;
    this.#bits = new Uint32Array(Math.ceil(this.#size / 32));
    this.#hashes = Math.max(1, Math.round(bitsPerKey * Math.LN2));
  }

  /** Adds the key; whether all its bits were set already (it may have been added before). */
  add(h1: number, h2: number): boolean {
    let present = true;
    for (let i = 0; i < this.#hashes; i++) {
      const bit = (h1 + Math.imul(i, h2)) >>> 0;
      const index = bit % this.#size;
      const word = index >>> 5;
      const mask = 1 << (index & 31);
      if ((this.#bits[word]! & mask) === 0) {
        present = false;
        this.#bits[word]! |= mask;
      }
    }
    if (!present) this.count++;
    return present;
  }

  has(h1: number, h2: number): boolean {
    for (let i = 0; i < this.#hashes; i++) {
      const index = ((h1 + Math.imul(i, h2)) >>> 0) % this.#size;
      if ((this.#bits[index >>> 5]! & (1 << (index & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit hashes of a string (FNV-1a and a multiply-xorshift), for double hashing. */
function hashes(key: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
  // An odd step visits distinct bits for each of the layer's hashes.
  return [h1 >>> 0, ((h2 ^ (h2 >>> 16)) | 1) >>> 0];
}

/**
 * Pass one: `screen(key)` for every key of the file, in order. Sized from an expected number of keys
 * (a file's line count bounds it for CSV and JSON Lines); past it, layers of twice the capacity and
 * more bits per key are added, so the false-positive rate stays near the first layer's.
 */
export class RepeatScreen {
  readonly #layers: BloomLayer[] = [];
  readonly #candidates = new Set<string>();

  constructor(expectedKeys?: number) {
    this.#layers.push(new BloomLayer(Math.max(MIN_CAPACITY, Math.ceil(expectedKeys ?? 0)), BITS_PER_KEY));
  }

  screen(key: string): void {
    if (this.#candidates.has(key)) return;
    const [h1, h2] = hashes(key);
    const layers = this.#layers;
    for (let i = 0; i < layers.length - 1; i++) {
      if (layers[i]!.has(h1, h2)) {
        this.#candidates.add(key);
        return;
      }
    }
    let last = layers[layers.length - 1]!;
    if (last.count >= last.capacity) {
      last = new BloomLayer(last.capacity * 2, BITS_PER_KEY + 2 * layers.length);
      layers.push(last);
    }
    if (last.add(h1, h2)) this.#candidates.add(key);
  }

  /** Keys that may repeat: the only ones pass two must remember. */
  get candidates(): number {
    return this.#candidates.size;
  }

  /**
   * Pass two: the rule itself. `firstLine(key, line)` is the line of the key's first occurrence
   * when this one is a repeat, else `undefined` (and this line is remembered as the first).
   */
  rule(): (key: string, line: number) => number | undefined {
    const candidates = this.#candidates;
    const firstLines = new Map<string, number>();
    return (key, line) => {
      if (!candidates.has(key)) return undefined;
      const first = firstLines.get(key);
      if (first === undefined) firstLines.set(key, line);
      return first;
    };
  }
}
