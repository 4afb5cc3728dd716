import { describe, expect, it } from 'vitest';
import { FirstOccurrences } from '../../../src/resources/bulk/windowing.ts';

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ALPHABETS = ['SKU-0123456789', 'abcé\u00ff', 'αβγ\u0100', '🍎x', '\ud800\udc00\ud800z'];

function randomKey(next: () => number): string {
  const alphabet = ALPHABETS[Math.floor(next() * ALPHABETS.length)]!;
  const length = next() < 0.02 ? 250 + Math.floor(next() * 20) : 1 + Math.floor(next() * 6);
  let key = '';
  for (let i = 0; i < length; i += 1) key += alphabet[Math.floor(next() * alphabet.length)];
  return key;
}

describe('FirstOccurrences: the repeat rule’s memory', () => {
  it('answers as a Map of first indexes would, for narrow, wide, lone-surrogate and long keys', () => {
    const next = random(42);
    const seen = new FirstOccurrences();
    const reference = new Map<string, number>();
    for (let index = 0; index < 60_000; index += 1) {
      const key = randomKey(next);
      const expected = reference.get(key) ?? -1;
      if (expected === -1) reference.set(key, index);
      expect(seen.claim(key, index)).toBe(expected);
    }
    expect(reference.size).toBeGreaterThan(10_000); // enough distinct keys to grow every table several times
  });

  it('tells apart keys that differ only in width, length or one code unit', () => {
    const seen = new FirstOccurrences();
    const keys = ['a', 'a\u0000', '\u0000a', 'ā', '\u0161', 'a'.repeat(256), 'a'.repeat(257), 'a'.repeat(255) + 'b', 'SKU-1', 'SKU-2', 'sku-1'];
    keys.forEach((key, index) => expect(seen.claim(key, index)).toBe(-1));
    keys.forEach((key, index) => expect(seen.claim(key, 100 + index)).toBe(index));
  });

  it('keeps the first index, beyond 32 bits too, and does not take the later one', () => {
    const seen = new FirstOccurrences();
    expect(seen.claim('SKU-1', 2 ** 40 + 3)).toBe(-1);
    expect(seen.claim('SKU-1', 2 ** 40 + 9)).toBe(2 ** 40 + 3);
    expect(seen.claim('SKU-1', 7)).toBe(2 ** 40 + 3);
  });

  it('does not keep the caller’s string: a key sliced from a large one is found by its content', () => {
    const seen = new FirstOccurrences();
    const line = `${'x'.repeat(10_000)}SKU-0000001-long-enough-to-be-sliced;${'é'.repeat(300)}`;
    expect(seen.claim(line.slice(10_000, 10_036), 0)).toBe(-1);
    expect(seen.claim(line.slice(10_036 + 1), 1)).toBe(-1); // a long key, kept in the Map as a copy
    expect(seen.claim(`SKU-0000001-long-enough-to-be-sliced`, 2)).toBe(0);
    expect(seen.claim('é'.repeat(300), 3)).toBe(1);
  });
});
