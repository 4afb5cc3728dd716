/** A source of numbers in [0, 1), like `Math.random`. */
export type RandomSource = () => number;

/**
 * mulberry32: a tiny seeded generator. Good enough to pick faults reproducibly; never used for
 * secrets (those come from `node:crypto`).
 */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
