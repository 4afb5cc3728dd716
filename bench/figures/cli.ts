// Figure: the CLI against the library it wraps. (1) 100k products from a CSV through
// `integration-sdk catalog push` (the built dist/cli.js, a process) into the sandbox with its rate
// limit off, against `upsertProducts` on the same items in a process of its own: wall time of each
// whole process, alternating which goes first. (2) Peak RSS of `catalog push --dry-run` (stream,
// parse, exact-number and duplicate checks; no request) on a 1 GB JSONL file against a 10 MB one.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repeat, ROOT, runWorker, startServer, workerPath } from '../lib/child.ts';
import type { Figure, FigureResult } from '../lib/figure.ts';
import { product } from '../lib/products.ts';
import { round, summarize } from '../lib/stats.ts';

const COUNT = 100_000;
const RUNS = 3;
const CLI = join(ROOT, 'dist', 'cli.js');

async function writeLines(file: string, lines: (i: number) => string, until: (i: number, bytes: number) => boolean): Promise<number> {
  const out = createWriteStream(file);
  let bytes = 0;
  let i = 0;
  for (; !until(i, bytes); i++) {
    const line = lines(i);
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return i;
}

function csvRow(i: number, storeId: string): string {
  const p = product(i, storeId);
  const store = p.stores![0]!;
  return `${p.external_id},${p.name},${p.price},${p.category},${store.store_id},${store.stock_quantity}\n`;
}

/** Runs the built CLI; resolves with its wall time and peak RSS (from the preloaded reporter). */
function runCli(args: string[], env: Record<string, string>): Promise<{ ms: number; peakRssMb: number; code: number | null }> {
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', workerPath('rss-on-exit.mjs'), CLI, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const kib = Number(/maxRSS_KiB (\d+)/.exec(stderr)?.[1]);
      if (code !== 0 || !Number.isFinite(kib)) reject(new Error(`cli ${args.join(' ')} exited ${code}: ${stderr}`));
      else resolve({ ms: performance.now() - start, peakRssMb: kib / 1024, code });
    });
  });
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function pushPair(dir: string, first: 'cli' | 'library'): Promise<{ cli: number; library: number; csvRead: number }> {
  const out: Record<string, number> = {};
  for (const mode of first === 'cli' ? ['cli', 'library'] : ['library', 'cli']) {
    const sandbox = await startServer<{ url: string; apiKey: string; storeIds: string[] }>('sandbox-server.ts', ['false']);
    try {
      const { url, apiKey, storeIds } = sandbox.info;
      const csv = join(dir, `products-${mode}.csv`);
      await writeLines(csv, (i) => (i === 0 ? 'external_id,name,price,category,store_id,stock_quantity\n' : csvRow(i - 1, storeIds[0]!)), (i) => i > COUNT);
      out[mode] =
        mode === 'cli'
          ? (await runCli(['catalog', 'push', csv], { INTEGRATION_API_KEY: apiKey, INTEGRATION_BASE_URL: `${url}/integration/v1`, INTEGRATION_RATE_LIMIT: 'off' })).ms
          : await timed(() => runWorker('bulk-client.ts', ['sdk', url, apiKey, storeIds[0]!, String(COUNT)]));
      if (mode === 'cli') out.csvRead = (await runWorker<{ ms: number }>('csv-read.ts', [csv])).ms;
    } finally {
      await sandbox.stop();
    }
  }
  return { cli: out.cli!, library: out.library!, csvRead: out.csvRead! };
}

async function dryRunRss(dir: string, bytes: number): Promise<{ items: number; peakRssMb: number; ms: number }> {
  const file = join(dir, `products-${bytes}.jsonl`);
  const items = await writeLines(file, (i) => `${JSON.stringify(product(i, '7c9e6679-7425-40de-944b-e07fc1f90ae7'))}\n`, (_i, written) => written >= bytes);
  try {
    const run = await runCli(['catalog', 'push', file, '--dry-run'], {});
    return { items, peakRssMb: run.peakRssMb, ms: run.ms };
  } finally {
    rmSync(file, { force: true });
  }
}

export const cliFigure: Figure = {
  name: 'cli',
  title: 'CLI: 100k CSV push vs upsertProducts; dry-run peak RSS 1 GB vs 10 MB JSONL',
  async run(): Promise<FigureResult> {
    const dir = mkdtempSync(join(tmpdir(), 'bench-cli-'));
    try {
      const pairs = await repeat(RUNS, (run) => pushPair(dir, run % 2 === 0 ? 'cli' : 'library'));
      const time = summarize(pairs.map((p) => p.cli / p.library));
      // What no push can go under: the library's time plus one csv-parse read of the whole file (start-up excluded).
      const floor = summarize(pairs.map((p) => (p.library + p.csvRead) / p.library));
      const small = await dryRunRss(dir, 10 * 1024 * 1024);
      const large = await dryRunRss(dir, 1024 * 1024 * 1024);
      const rss = large.peakRssMb / small.peakRssMb;
      return {
        figures: { cli_100k_time_x_library: round(time.median), cli_100k_floor_x_library: round(floor.median), cli_1gb_rss_x_10mb: round(rss) },
        details: {
          items: COUNT,
          runs: RUNS,
          sandbox: 'rate: false, own process, fresh per run; CLI with INTEGRATION_RATE_LIMIT=off like the library with rateLimit: false',
          timeRatio: time,
          cliMs: summarize(pairs.map((p) => p.cli)),
          libraryMs: summarize(pairs.map((p) => p.library)),
          csvReadMs: summarize(pairs.map((p) => p.csvRead)),
          floorXLibrary: floor,
          dryRun10Mb: small,
          dryRun1Gb: large,
        },
        targets: [
          // Issue 20: reported without a target (a csv-parse read alone is 1.30× the library, and at
          // the service's 120/min the parse does not show).
          { target: 'cli 1 GB JSONL peak RSS ≤ 1.2× 10 MB', met: rss <= 1.2, measured: `${rss.toFixed(2)}× (${Math.round(large.peakRssMb)} / ${Math.round(small.peakRssMb)} MB)` },
        ],
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
