// The progress line and its ETA, with times passed in (no clock).
import { describe, expect, test } from 'vitest';
import { TokenBucket } from '../../src/transport/rate-limiter.ts';
import { Eta, etaSeconds, progressLine, shortCount, type ProgressFigures } from '../../src/cli/progress.ts';
import { ManualClock } from '../support/manual-clock.ts';

const figures = (over: Partial<ProgressFigures> = {}): ProgressFigures => ({
  state: { done: 75_500, total: 100_000, created: 75_000, updated: 500, errors: 12 },
  kind: 'catalog',
  label: 'catalog push',
  elapsedSeconds: 65,
  itemsPerSecond: 2296.4,
  etaSeconds: 85,
  ...over,
});

test('the line fits the terminal: the ETA, items done / total and errors always stay; the counts shorten before parts go', () => {
  const wide = progressLine(figures(), 160);
  expect(wide).toMatch(/^catalog push \[█+░+\] 75% 75500\/100000 created 75000 updated 500 errors 12 2296 items\/s elapsed 1m05s ETA 1m25s$/);
  for (const width of [99, 80, 60, 45, 36]) {
    const line = progressLine(figures(), width);
    expect(line.length, `${width}: ${line}`).toBeLessThanOrEqual(width - 2); // room for the ^C a terminal echoes
    expect(line, `${width}`).toMatch(/75\.5k\/100k .*errors 12 .*ETA 1m25s$/);
  }
  expect(progressLine(figures(), 99)).toMatch(/^\[█+░+\] 75% 75\.5k\/100k created 75k updated 500 errors 12 2296 items\/s elapsed 1m05s ETA 1m25s$/);
  expect(progressLine(figures(), 60)).toBe('75% 75.5k/100k errors 12 ETA 1m25s');
  expect(progressLine(figures(), 36)).toBe('75.5k/100k errors 12 ETA 1m25s');
  expect([9_999, 10_000, 99_950, 100_000, 1_234_567].map(shortCount)).toEqual(['9999', '10k', '99.9k', '100k', '1.23M']);
});

test('at 80 columns the line keeps the percentage and the ETA: the counts shorten, the elapsed time and the bar go first', () => {
  expect(progressLine(figures(), 80)).toBe('75% 75.5k/100k created 75k updated 500 errors 12 2296 items/s ETA 1m25s');
  const stock = progressLine(figures({ kind: 'stock', label: 'stock push', state: { done: 21_500, total: 100_000, created: 0, updated: 21_500, errors: 0 }, itemsPerSecond: 978, elapsedSeconds: 16, etaSeconds: 80 }), 80);
  expect(stock).toMatch(/^\[█+░+\] 21% 21\.5k\/100k updated 21\.5k errors 0 978 items\/s ETA 1m20s$/);
  // Short counts need no shortening: as written.
  expect(progressLine(figures({ state: { done: 500, total: 1500, created: 500, updated: 0, errors: 0 }, elapsedSeconds: 1, itemsPerSecond: 500, etaSeconds: 2 }), 80))
    .toMatch(/^\[█+░+\] 33% 500\/1500 created 500 updated 0 errors 0 500 items\/s ETA 2s$/);
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

describe('while the rate limiter holds the run, the ETA counts the wait it knows of (at 80 columns)', () => {
  const BUDGET = { requestsPerMinute: 120, burst: 120 };

  /**
   * A push of `total` items that has had `batches` batches of 500 acknowledged, each sent once the
   * bucket gave it a token and answered `answerMs` later, on a manual clock.
   */
  async function run(total: number, batches: number, answerMs: number) {
    const clock = new ManualClock();
    const bucket = new TokenBucket(BUDGET, clock);
    const eta = new Eta(total, 500, BUDGET, clock.now(), bucket);
    for (let i = 1; i <= batches; i++) {
      let finished: (() => void) | undefined | null = null;
      void bucket.acquire().then((f) => (finished = f));
      // Time moves only while the bucket holds the batch back.
      while (finished === null) {
        await new Promise(setImmediate);
        if (finished === null) clock.advance(10);
      }
      clock.advance(answerMs);
      (finished as (() => void) | undefined)?.();
      eta.record(i * 500, clock.now());
    }
    const line = () => progressLine({ state: { done: eta.done, total, created: eta.done, updated: 0, errors: 0 }, kind: 'catalog', label: 'catalog push', elapsedSeconds: 0, itemsPerSecond: eta.rate(clock.now()), etaSeconds: eta.seconds(clock.now()) }, 80);
    return { clock, bucket, eta, line };
  }

  test("a 429's pause with one batch left: the ETA is the pause, counting down, never 1s", async () => {
    const { clock, bucket, eta, line } = await run(100_000, 199, 50);
    expect(eta.seconds(clock.now())).toBeLessThanOrEqual(1); // the last batch, at the pace the service allows
    bucket.pause(30_000); // the service answered 429 with Retry-After: 30
    expect(eta.seconds(clock.now())).toBe(30);
    expect(line()).toMatch(/^(\[█+░*\] )?99% 99\.5k\/100k .*ETA 30s$/);
    clock.advance(10_000);
    expect(eta.seconds(clock.now())).toBe(20);
    expect(line()).toMatch(/ETA 20s$/);
    clock.advance(15_000);
    expect(line()).toMatch(/ETA 5s$/);
  });

  test("a 429 on the first batch (another process had spent the key's bucket): the rest goes at the key's rate, no burst", async () => {
    const { clock, bucket, eta, line } = await run(100_000, 0, 0);
    expect(eta.seconds(clock.now())).toBe(40); // a full burst of 120, then 80 at 2 a second
    bucket.pause(5_000); // the service's bucket is empty: it refills at 2 a second from now
    expect(eta.seconds(clock.now())).toBe(100); // 200 batches at 2 a second
    expect(line()).toMatch(/^\[░+\] 0% 0\/100k .*ETA 1m40s$/);
    clock.advance(5_000);
    expect(eta.seconds(clock.now())).toBe(95);
  });
});
