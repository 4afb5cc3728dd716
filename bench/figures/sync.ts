// Figure (issue 20): the delta sync. In one run:
// - at the service's real rate (the sandbox's 120/min with its burst, the client's default bucket):
//   100k products pushed whole (an empty state), then, 10 s later, the same 100k with 1% changed,
//   in fresh processes: write requests and wall time of the second against the first;
// - 1M unchanged products: write requests (0) and peak RSS against 100k unchanged, each run in a
//   fresh process, the state filled beforehand through the counting server (and, as a diagnostic,
//   one pair with V8's young generation capped);
// - everything changed with the rate limit off: a first sync (empty state) against upsertProducts
//   of the same array, each into a fresh sandbox, alternating.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repeat, runWorker, startServer } from '../lib/child.ts';
import type { Figure, FigureResult } from '../lib/figure.ts';
import { round, summarize } from '../lib/stats.ts';

const COUNT = 100_000;
const LARGE = 1_000_000;
const RUNS = 3;
const TARGET_WRITES = 2;
const TARGET_TIME_X_FULL = 1 / 20;
const TARGET_RSS_X_100K = 1.2;
const TARGET_X_UPSERT = 1.3;

interface Run {
  ms: number;
  requests: number;
  writes: number;
  sent: number;
  unchanged: number;
  peakRssMb: number;
  /** With --expose-gc: the heap still used after a full GC at the end. */
  liveHeapMb?: number;
}

type SandboxInfo = { url: string; apiKey: string; storeIds: string[] };

const syncRun = (url: string, apiKey: string, state: string, count: number, changedEvery: number, rate: 'on' | 'off', input: 'array' | 'stream', nodeFlags: string[] = []) =>
  runWorker<Run>('sync-client.ts', ['sync', url, apiKey, state, String(count), String(changedEvery), rate, input], nodeFlags);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Long enough for the sandbox's per-key bucket (2/s) to hold the few requests a later, scheduled run makes. */
const BETWEEN_RUNS_MS = 10_000;

async function atTheRateLimit(dir: string) {
  const sandbox = await startServer<SandboxInfo>('sandbox-server.ts', ['{}']);
  try {
    const { url, apiKey } = sandbox.info;
    const state = join(dir, 'rated.db');
    const full = await syncRun(url, apiKey, state, COUNT, 0, 'on', 'array');
    // The full push emptied the service's bucket; a nightly run comes hours later, not at once.
    await pause(BETWEEN_RUNS_MS);
    const changed = await syncRun(url, apiKey, state, COUNT, 100, 'on', 'array');
    return { full, changed };
  } finally {
    await sandbox.stop();
  }
}

async function unchangedMemory(dir: string) {
  const server = await startServer<{ url: string }>('count-server.ts');
  try {
    const { url } = server.info;
    const key = 'service_bench_secret';
    const small = join(dir, 'small.db');
    const large = join(dir, 'large.db');
    const fill = { small: await syncRun(url, key, small, COUNT, 0, 'off', 'stream'), large: await syncRun(url, key, large, LARGE, 0, 'off', 'stream') };
    const runs = await repeat(RUNS, async (run) => {
      const order = run % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
      const out: Partial<Record<'small' | 'large', Run>> = {};
      for (const size of order) out[size] = await syncRun(url, key, size === 'small' ? small : large, size === 'small' ? COUNT : LARGE, 0, 'off', 'stream', ['--expose-gc']);
      return out as Record<'small' | 'large', Run>;
    });
    // Diagnostic, not the figure: the same pair with V8's young generation capped, which shows
    // whether the growth is memory the run holds or the young generation V8 grows for a long run.
    const cappedYoung = ['--expose-gc', '--max-semi-space-size=4'];
    const capped = {
      small: await syncRun(url, key, small, COUNT, 0, 'off', 'stream', cappedYoung),
      large: await syncRun(url, key, large, LARGE, 0, 'off', 'stream', cappedYoung),
    };
    return { fill, runs, capped };
  } finally {
    await server.stop();
  }
}

async function everythingChanged(dir: string) {
  return repeat(RUNS, async (run) => {
    const once = async (mode: 'sync' | 'upsert') => {
      const sandbox = await startServer<SandboxInfo>('sandbox-server.ts', ['false']);
      try {
        const { url, apiKey, storeIds } = sandbox.info;
        const args = [mode, url, apiKey, join(dir, `changed-${run}.db`), String(COUNT), '0', 'off', 'array', storeIds[0]!];
        return await runWorker<Run>('sync-client.ts', args);
      } finally {
        await sandbox.stop();
      }
    };
    const first = run % 2 === 0 ? 'sync' : 'upsert';
    const a = await once(first);
    const b = await once(first === 'sync' ? 'upsert' : 'sync');
    return first === 'sync' ? { sync: a, upsert: b } : { sync: b, upsert: a };
  });
}

export const syncFigure: Figure = {
  name: 'sync',
  title: 'delta sync: 1% changed at 120/min, 1M unchanged, everything changed vs upsertProducts',
  async run(): Promise<FigureResult> {
    const dir = mkdtempSync(join(tmpdir(), 'bench-sync-'));
    try {
      const rated = await atTheRateLimit(dir);
      const memory = await unchangedMemory(dir);
      const changed = await everythingChanged(dir);
      const timeXFull = rated.changed.ms / rated.full.ms;
      const rssRatio = summarize(memory.runs.map((r) => r.large.peakRssMb / r.small.peakRssMb));
      const largeWrites = Math.max(...memory.runs.map((r) => r.large.writes));
      const largeSeconds = summarize(memory.runs.map((r) => r.large.ms / 1000));
      const xUpsert = summarize(changed.map((p) => p.sync.ms / p.upsert.ms));
      return {
        figures: {
          sync_1pct_writes: rated.changed.writes,
          sync_1pct_time_x_full: round(timeXFull, 3),
          sync_1m_unchanged_writes: largeWrites,
          sync_1m_unchanged_s: round(largeSeconds.median, 1),
          sync_1m_unchanged_rss_x_100k: round(rssRatio.median),
          sync_all_changed_x_upsert: round(xUpsert.median),
        },
        details: {
          items: COUNT,
          rateLimit: 'sandbox default per key (120 at once, 2/s), client default bucket (120/min, burst 120)',
          fullPush: rated.full,
          onePercentChanged: rated.changed,
          unchanged: {
            fill: memory.fill,
            runs: memory.runs,
            rssRatio,
            smallPeakRssMb: summarize(memory.runs.map((r) => r.small.peakRssMb)),
            largePeakRssMb: summarize(memory.runs.map((r) => r.large.peakRssMb)),
            largeSeconds,
            smallSeconds: summarize(memory.runs.map((r) => r.small.ms / 1000)),
            liveHeapAfterGcMb: { small: summarize(memory.runs.map((r) => r.small.liveHeapMb ?? 0)), large: summarize(memory.runs.map((r) => r.large.liveHeapMb ?? 0)) },
            youngGenerationCappedAt4Mb: { small: memory.capped.small.peakRssMb, large: memory.capped.large.peakRssMb, ratio: round(memory.capped.large.peakRssMb / memory.capped.small.peakRssMb) },
          },
          everythingChanged: {
            ratio: xUpsert,
            syncMs: summarize(changed.map((p) => p.sync.ms)),
            upsertMs: summarize(changed.map((p) => p.upsert.ms)),
            syncPeakRssMb: summarize(changed.map((p) => p.sync.peakRssMb)),
            upsertPeakRssMb: summarize(changed.map((p) => p.upsert.peakRssMb)),
          },
        },
        targets: [
          { target: `sync 100k, 1% changed, at 120/min: ≤ ${TARGET_WRITES} write requests`, met: rated.changed.writes <= TARGET_WRITES, measured: `${rated.changed.writes} (+${rated.changed.requests - rated.changed.writes} health)` },
          {
            target: 'sync 100k, 1% changed, at 120/min: ≤ 1/20 of the full push’s wall time',
            met: timeXFull <= TARGET_TIME_X_FULL,
            measured: `${timeXFull.toFixed(3)}× (${(rated.changed.ms / 1000).toFixed(1)} s against ${(rated.full.ms / 1000).toFixed(1)} s)`,
          },
          { target: 'sync 1M unchanged: 0 write requests', met: largeWrites === 0, measured: `${largeWrites} (${largeSeconds.median.toFixed(1)} s)` },
          {
            target: `sync 1M unchanged: peak RSS ≤ ${TARGET_RSS_X_100K}× 100k unchanged`,
            met: rssRatio.median <= TARGET_RSS_X_100K,
            measured: `${rssRatio.median.toFixed(2)}× (young generation capped at 4 MB: ${(memory.capped.large.peakRssMb / memory.capped.small.peakRssMb).toFixed(2)}×)`,
          },
          { target: `sync 100k, everything changed, rate limit off: ≤ ${TARGET_X_UPSERT}× upsertProducts`, met: xUpsert.median <= TARGET_X_UPSERT, measured: `${xUpsert.median.toFixed(2)}×` },
        ],
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
