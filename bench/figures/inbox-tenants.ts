// Figures of the inbox for many merchants (issue 28).
// - Receiving: deliveries per second spread over N connected tenants (10,000), through one inbox
//   given the tenants registry, against an inbox given a registry of one tenant (the same process,
//   passes alternating); the contract: at least 1/1.2 (0.83) of the one-tenant rate.
// - Worker fairness: a quiet tenant's new order while another tenant's backlog of 10,000 drains,
//   SQLite and Postgres: the busy tenant's entries completed between its arrival and its completion
//   (the contract: within one claim round, at most 2 × concurrency), and its latency against the
//   same latency with no backlog.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, runWorker, startServer, workerPath } from '../lib/child.ts';
import type { Figure, FigureResult, TargetCheck } from '../lib/figure.ts';
import { startPostgres } from '../lib/postgres-server.ts';
import { median, percentile, round } from '../lib/stats.ts';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 10_000);
const BACKLOG = Number(process.env.BENCH_INBOX_BACKLOG ?? 10_000);
const PASSES = 5;
const PER_PASS = 2000;
const CONCURRENCY = 8;
/** docs/tenants.md: deliveries spread over the tenants at no less than 1/1.2 of one tenant's rate. */
const RECEIVE_TARGET = 1 / 1.2;

interface Fairness {
  backlog: number;
  concurrency: number;
  idleMs: number[];
  quietMs: number[];
  busyBetween: number[];
  drainedS: number;
  fillS: number;
}

async function receiving(): Promise<{ tenants: number; one: number[]; many: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-inbox-tenants-'));
  const server = await startServer<{ url: string }>('tenants-sandbox.ts', [String(TENANTS), join(dir, 'keys.json')]);
  try {
    // N real connects (five requests each) take minutes on a shared machine.
    const { stdout } = await runNode([workerPath('inbox-tenants-receive.ts'), server.info.url, join(dir, 'keys.json'), dir, String(PASSES), String(PER_PASS)], { timeoutMs: 1_800_000 });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as { tenants: number; one: number[]; many: number[] };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fairness(): Promise<{ sqlite: Fairness; postgres: Fairness }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-inbox-fair-'));
  const args = [String(BACKLOG), String(CONCURRENCY), '2'];
  try {
    const sqlite = await runWorker<Fairness>('inbox-fairness.ts', [join(dir, 'fair.db'), ...args]);
    const server = await startPostgres();
    try {
      const postgres = await runWorker<Fairness>('inbox-fairness.ts', [`${server.url}#bench_fair`, ...args]);
      return { sqlite, postgres };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const inboxTenantsFigure: Figure = {
  name: 'inbox-tenants',
  title: `inbox for many merchants: received/s over ${TENANTS.toLocaleString('en')} tenants vs one; a quiet tenant's order while a backlog of ${BACKLOG.toLocaleString('en')} drains`,
  async run(): Promise<FigureResult> {
    const received = await receiving();
    const ratio = median(received.many.map((many, i) => many / received.one[i]!));
    const fair = await fairness();
    const figures: Record<string, number> = {
      inbox_tenants_receive_x_one: round(ratio),
      inbox_tenants_received_per_s: Math.round(median(received.many)),
    };
    const targets: TargetCheck[] = [
      {
        target: `inbox receive over ${received.tenants.toLocaleString('en')} tenants: ≥ ${RECEIVE_TARGET.toFixed(2)}× one tenant's rate`,
        met: ratio >= RECEIVE_TARGET,
        measured: `${ratio.toFixed(2)}× (${Math.round(median(received.many))}/s vs ${Math.round(median(received.one))}/s)`,
      },
    ];
    const details: Record<string, unknown> = {
      receive: { tenants: received.tenants, perPass: PER_PASS, manyPerSecond: received.many.map(Math.round), onePerSecond: received.one.map(Math.round) },
    };
    for (const [store, run] of [['sqlite', fair.sqlite], ['postgres', fair.postgres]] as const) {
      const worst = Math.max(...run.busyBetween);
      const latency = median(run.quietMs);
      figures[`inbox_fair_busy_between_max_${store}`] = worst;
      figures[`inbox_fair_quiet_ms_${store}`] = round(latency, 1);
      figures[`inbox_fair_quiet_x_idle_${store}`] = round(latency / median(run.idleMs));
      targets.push({
        target: `inbox fairness (${store}): a quiet tenant's order within one claim round (≤ ${2 * run.concurrency} busy entries completed meanwhile)`,
        met: worst <= 2 * run.concurrency,
        measured: `at most ${worst} (median ${median(run.busyBetween)}); ${latency.toFixed(0)} ms median, p95 ${percentile(run.quietMs, 95).toFixed(0)} ms, idle ${median(run.idleMs).toFixed(0)} ms`,
      });
      details[`fairness_${store}`] = { ...run, quietMs: run.quietMs.map((ms) => round(ms, 1)), idleMs: run.idleMs.map((ms) => round(ms, 1)) };
    }
    return { figures, details, targets };
  },
};
