import { describe, expect, it } from 'vitest';
import { RepeatScreen } from '../../src/cli/repeats.ts';

/** Keys with repeats at known places; a fixed seed so that a failure can be replayed. */
function keysWithRepeats(count: number, seed: number): string[] {
  let state = seed;
  const random = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  const keys: string[] = [];
  for (let i = 0; i < count; i++) keys.push(random() < 0.02 && i > 0 ? keys[Math.floor(random() * i)]! : `SKU-${i}-${Math.floor(random() * 1e9)}`);
  return keys;
}

/** What a Map of every key would answer: the exact rule the screen must reproduce. */
function exactRule(keys: string[]): Array<number | undefined> {
  const first = new Map<string, number>();
  return keys.map((key, line) => {
    const seen = first.get(key);
    if (seen === undefined) first.set(key, line);
    return seen;
  });
}

describe('RepeatScreen', () => {
  it.each([
    ['sized from the line count', 150_000, 150_000],
    ['with no estimate: layers added as it fills', 300_000, undefined],
    ['an estimate far too small', 300_000, 1_000],
  ])('%s: the rule flags exactly the repeats, with their first lines', (_name, count, expected) => {
    const keys = keysWithRepeats(count, 7);
    const screen = new RepeatScreen(expected);
    for (const key of keys) screen.screen(key);
    const rule = screen.rule();
    const exact = exactRule(keys);
    expect(keys.map((key, line) => rule(key, line))).toEqual(exact);
    // Candidates are the real repeats plus a few false positives, not every key.
    const repeated = new Set(keys.filter((_key, line) => exact[line] !== undefined).map((_key, i, all) => all[i])).size;
    expect(screen.candidates).toBeGreaterThanOrEqual(repeated);
    expect(screen.candidates).toBeLessThan(repeated + count * 0.03);
  });

  it('remembers nothing for a key seen once', () => {
    const screen = new RepeatScreen(10);
    screen.screen('A');
    screen.screen('B');
    screen.screen('A');
    const rule = screen.rule();
    expect([rule('A', 1), rule('B', 2), rule('A', 3)]).toEqual([undefined, undefined, 1]);
    expect(screen.candidates).toBe(1);
  });
});
