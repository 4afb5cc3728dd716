// The progress line and its ETA, with times passed in (no clock).
import { expect, test } from 'vitest';
import { Eta, etaSeconds, progressLine, type ProgressFigures } from '../../src/cli/progress.ts';

const figures = (over: Partial<ProgressFigures> = {}): ProgressFigures => ({
  state: { done: 75_500, total: 100_000, created: 75_000, updated: 500, errors: 12 },
  kind: 'catalog',
  label: 'catalog push',
  elapsedSeconds: 65,
  itemsPerSecond: 2296.4,
  etaSeconds: 85,
  ...over,
});

test('the line fits the terminal: the ETA, items done / total and errors always stay; parts go least useful first', () => {
  const wide = progressLine(figures(), 160);
  expect(wide).toMatch(/^catalog push \[█+░+\] 75% 75500\/100000 created 75000 updated 500 errors 12 2296 items\/s elapsed 1m05s ETA 1m25s$/);
  for (const width of [99, 80, 60, 45, 36]) {
    const line = progressLine(figures(), width);
    expect(line.length, `${width}: ${line}`).toBeLessThanOrEqual(width - 2); // room for the ^C a terminal echoes
    expect(line, `${width}`).toMatch(/75500\/100000 .*errors 12 .*ETA 1m25s$/);
  }
  expect(progressLine(figures(), 99)).toMatch(/^\[█+░+\] 75500\/100000 created 75000 updated 500 errors 12 2296 items\/s elapsed 1m05s ETA 1m25s$/);
  expect(progressLine(figures(), 60)).toBe('75500/100000 errors 12 2296 items/s ETA 1m25s');
  expect(progressLine(figures(), 36)).toBe('75500/100000 errors 12 ETA 1m25s');
});

test('stock push shows no created count', () => {
  const line = progressLine(figures({ kind: 'stock', label: 'stock push', state: { done: 10, total: 20, created: 0, updated: 9, errors: 1 } }), 120);
  expect(line).not.toMatch(/created/);
  expect(line).toMatch(/updated 9 errors 1/);
});

test('the ETA counts the burst: 100k products = 200 requests ≈ 40 s at 120/min', () => {
  expect(etaSeconds({ done: 0, total: 100_000, created: 0, updated: 0, errors: 0 }, 500, 0)).toBe(40);
  // 130 requests sent in 5 s: the burst is spent (120 - 130 + 10 = 0 left), 70 batches at 2/s.
  expect(etaSeconds({ done: 65_000, total: 100_000, created: 0, updated: 0, errors: 0 }, 500, 5_000)).toBe(35);
});

test("the ETA follows the observed rate when another process had spent part of the service's bucket", () => {
  // 60 batches went at once (what was left of the service's burst), then the service let 2 a second
  // through: 140 batches left take 70 s, not the floor's estimate from a full burst.
  const eta = new Eta(100_000, 500, { requestsPerMinute: 120, burst: 120 }, 0);
  let done = 0;
  for (let i = 1; i <= 60; i++) eta.record((done += 500), 1_000 + i * 10);
  let at = 1_600;
  for (let i = 0; i < 40; i++) eta.record((done += 500), (at += 500));
  const left = (100_000 - done) / 1000; // 1,000 items a second from now on
  expect(eta.seconds(at)).toBeGreaterThanOrEqual(Math.round(left * 0.9));
  expect(eta.seconds(at)).toBeLessThanOrEqual(Math.round(left * 1.1));
  expect(Math.round(eta.rate(at))).toBe(1000);
  // The floor alone (and the average since the start) promised much less.
  expect(etaSeconds({ done, total: 100_000, created: 0, updated: 0, errors: 0 }, 500, at)).toBeLessThan(left * 0.7);
});

test('before a few batches the ETA is the floor; a stall makes it grow', () => {
  const eta = new Eta(100_000, 500, undefined, 0);
  eta.record(500, 100);
  expect(eta.seconds(100)).toBe(etaSeconds({ done: 500, total: 100_000, created: 0, updated: 0, errors: 0 }, 500, 100, undefined));
  eta.record(1000, 200);
  eta.record(1500, 300);
  const before = eta.seconds(300);
  expect(eta.seconds(20_000)).toBeGreaterThan(before * 10);
});
