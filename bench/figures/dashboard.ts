// Figure: each dashboard page's answer time with 1,000,000 entries in the inbox, SQLite and
// Postgres (bench/workers/dashboard-bench.ts fills the store by bulk SQL, then asks each page 15
// times after a warm-up through the dashboard's Fetch handler). Targets: ≤ 300 ms at the median and
// ≤ 1 s at the worst, every page. `overview_uncached` is the overview of a dashboard just started,
// which counts every hourly bucket of the week once instead of only the hour under way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorker } from '../lib/child.ts';
import type { Figure, FigureResult, TargetCheck } from '../lib/figure.ts';
import { startPostgres } from '../lib/postgres-server.ts';
import { median, round } from '../lib/stats.ts';

const ENTRIES = 1_000_000;
const RUNS = 15;

interface Run {
  entries: number;
  fillSeconds: number;
  pages: Record<string, number[]>;
}

export const dashboardFigure: Figure = {
  name: 'dashboard',
  title: 'dashboard: each page answer time with 1M entries, SQLite and Postgres',
  async run(): Promise<FigureResult> {
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-bench-'));
    let sqlite: Run;
    try {
      sqlite = await runWorker<Run>('dashboard-bench.ts', [join(dir, 'inbox.db'), String(ENTRIES), String(RUNS)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const server = await startPostgres();
    let postgres: Run;
    try {
      postgres = await runWorker<Run>('dashboard-bench.ts', [`${server.url}#bench_dashboard`, String(ENTRIES), String(RUNS)]);
    } finally {
      await server.stop();
    }
    const figures: Record<string, number> = {};
    const details: Record<string, unknown> = { entries: ENTRIES, runsPerPage: RUNS };
    const targets: TargetCheck[] = [];
    for (const [store, run] of [['sqlite', sqlite], ['postgres', postgres]] as const) {
      const pages = Object.entries(run.pages).map(([page, times]) => ({ page, median: median(times), worst: Math.max(...times) }));
      const slowestMedian = pages.reduce((a, b) => (b.median > a.median ? b : a));
      const slowestWorst = pages.reduce((a, b) => (b.worst > a.worst ? b : a));
      figures[`dashboard_1m_${store}_median_ms`] = round(slowestMedian.median, 1);
      figures[`dashboard_1m_${store}_worst_ms`] = round(slowestWorst.worst, 1);
      details[store] = { entries: run.entries, fillSeconds: round(run.fillSeconds, 1), pages: Object.fromEntries(pages.map((p) => [p.page, { medianMs: round(p.median, 1), worstMs: round(p.worst, 1) }])) };
      targets.push({
        target: `dashboard (${store}, 1M entries): every page ≤ 300 ms median, ≤ 1 s worst`,
        met: slowestMedian.median <= 300 && slowestWorst.worst <= 1000,
        measured: `slowest median ${slowestMedian.median.toFixed(0)} ms (${slowestMedian.page}), worst ${slowestWorst.worst.toFixed(0)} ms (${slowestWorst.page})`,
      });
    }
    return { figures, details, targets };
  },
};
