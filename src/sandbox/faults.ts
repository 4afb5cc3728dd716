import { seededRandom, type RandomSource } from './random.ts';

/**
 * What a faulty request gets:
 * - `error500`, `error503`, `error429`: answered at once, not processed;
 * - `processed500`: processed (its side effects happen), then answered 500;
 * - `drop`: processed, then the connection is dropped (a lost response).
 */
export type FaultKind = 'error500' | 'error503' | 'error429' | 'processed500' | 'drop';

/** Every fault the sandbox can inject (see `FaultOptions`). */
export const FAULT_KINDS: readonly FaultKind[] = ['error500', 'error503', 'error429', 'processed500', 'drop'];

/**
 * A seeded share of requests fails, so retry handling can be tested reproducibly.
 * @example
 * createSandbox({ faults: { rate: 0.2, seed: 42, kinds: ['error503', 'drop'] } })
 */
export interface FaultOptions {
  /** Share of requests that fail, from 0 to 1. */
  rate: number;
  /** Seed of the fault sequence; without it the sandbox's `random` source is used. */
  seed?: number;
  /** Kinds to pick from, uniformly. @default every kind */
  kinds?: readonly FaultKind[];
}

/** Draws the fault of each request, in request order: the same seed and requests give the same faults. */
export class FaultPlan {
  readonly #rate: number;
  readonly #kinds: readonly FaultKind[];
  readonly #random: RandomSource;

  constructor(options: FaultOptions, fallback: RandomSource) {
    if (!(options.rate >= 0 && options.rate <= 1)) throw new RangeError(`faults.rate must be between 0 and 1, got ${options.rate}`);
    const kinds = options.kinds ?? FAULT_KINDS;
    if (kinds.length === 0 || kinds.some((k) => !FAULT_KINDS.includes(k))) {
      throw new RangeError(`faults.kinds must be a non-empty list of ${FAULT_KINDS.join(', ')}`);
    }
    this.#rate = options.rate;
    this.#kinds = kinds;
    this.#random = options.seed === undefined ? fallback : seededRandom(options.seed);
  }

  next(): FaultKind | null {
    if (this.#random() >= this.#rate) return null;
    const index = Math.floor(this.#random() * this.#kinds.length);
    return this.#kinds[Math.min(index, this.#kinds.length - 1)] ?? null;
  }
}
