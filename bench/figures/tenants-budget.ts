// Figure: 50 tenants on one egress budget of 300/min against the sandbox (its per-IP bucket at the
// service's 300/min, burst 300). One tenant pushes 100k SKUs (1,000 batches of 100, 4 at a time:
// more batches than the burst, so the push lasts the whole run); the other 49 each read an order and
// credit loyalty points every 30 s (about 200 requests a minute together), their ticks spread over
// the 30 s. Measured: how long the 49's calls waited for a token (p50, p95), the budget used, 429s
// after the first second — through the fair budget, and through the baseline of the SDK's parts
// without it (a bucket per key, then one egress bucket, first come first served), in one process
// and in four processes on one Redis, all in the same run.
// What is scaled: nothing in time (the real rates). The seeded merchant has few keys, so the 49 till
// tenants share one key (their ~200/min stay under it), and the pusher's key, like the sandbox's
// per-key bucket, is given 300/min: it alone could take the whole IP, the worst case for the others.
// `BENCH_TENANTS_BUDGET_SECONDS` shortens each run (default 60).
import { runWorker, startServer } from '../lib/child.ts';
import type { Figure, FigureResult, TargetCheck } from '../lib/figure.ts';
import { RedisServer } from '../lib/redis-server.ts';
import { percentile, round } from '../lib/stats.ts';
import type { TenantsBudgetOutput, TenantsBudgetRun } from '../workers/tenants-budget-client.ts';

const TILLS = 49;
const EVERY_MS = 30_000;
const EGRESS = { requestsPerMinute: 300, burst: 300 };
const KEY = { requestsPerMinute: 300, burst: 300 };
const SECONDS = Number(process.env.BENCH_TENANTS_BUDGET_SECONDS ?? 60);
/** Time for the worker processes to start and connect before they all begin together. */
const START_DELAY_MS = 4_000;

interface Scenario {
  mode: 'fair' | 'fcfs';
  processes: number;
}

interface ScenarioResult extends Scenario {
  tillCalls: number;
  tillErrors: number;
  waitP50Ms: number;
  waitP95Ms: number;
  waitMaxMs: number;
  requests: number;
  elapsedS: number;
  /** Requests over what the egress allows in the same time (burst + rate × elapsed). */
  budgetUsedPct: number;
  /** From 10 s on, once the burst is spent: requests over the rate alone. */
  pacedUsedPct: number;
  status429Total: number;
  status429AfterFirstSecond: number;
  batches: number;
}

interface SandboxInfo {
  url: string;
  keys: { full: string; oneStore: string };
  storeIds: string[];
}

async function createOrder(sandbox: SandboxInfo): Promise<string> {
  const response = await fetch(`${sandbox.url}/_sandbox/orders`, {
    method: 'POST',
    headers: { 'X-API-Key': sandbox.keys.full, 'Content-Type': 'application/json' },
    body: JSON.stringify({ store_id: sandbox.storeIds[0] }),
  });
  if (response.status !== 201) throw new Error(`the sandbox did not create an order: ${response.status}`);
  return ((await response.json()) as { order: { order_id: string } }).order.order_id;
}

async function runScenario({ mode, processes }: Scenario): Promise<ScenarioResult> {
  const rate = { perKey: { capacity: KEY.burst, refillPerSecond: KEY.requestsPerMinute / 60 }, perIp: { capacity: EGRESS.burst, refillPerSecond: EGRESS.requestsPerMinute / 60 } };
  const sandbox = await startServer<SandboxInfo>('sandbox-server.ts', [JSON.stringify(rate)]);
  const redis = processes > 1 ? await RedisServer.start() : undefined;
  try {
    const orderId = await createOrder(sandbox.info);
    const startAt = Date.now() + START_DELAY_MS;
    const outputs = await Promise.all(
      Array.from({ length: processes }, (_, index) => {
        const run: TenantsBudgetRun = {
          mode,
          sandboxUrl: sandbox.info.url,
          keys: { pusher: sandbox.info.keys.full, tills: sandbox.info.keys.oneStore },
          storeId: sandbox.info.storeIds[0]!,
          orderId,
          customerExternalId: 'CUST-001',
          pusher: index === 0,
          tills: Array.from({ length: TILLS }, (_, till) => till).filter((till) => till % processes === index),
          tillCount: TILLS,
          everyMs: EVERY_MS,
          keyBudget: KEY,
          egress: { id: 'bench', ...EGRESS },
          ...(redis ? { redisUrl: redis.url } : {}),
          skus: 100_000,
          batchSize: 100,
          concurrency: 4,
          startAt,
          durationMs: SECONDS * 1000,
        };
        return runWorker<TenantsBudgetOutput>('tenants-budget-client.ts', [JSON.stringify(run)]);
      }),
    );
    const sent = outputs.flatMap((output) => output.sent).sort((a, b) => a.at - b.at);
    const waits = outputs.flatMap((output) => output.waits);
    const t0 = sent[0]!.at;
    const elapsedS = (sent.at(-1)!.at - t0) / 1000;
    const paced = sent.filter((request) => request.at - t0 >= 10_000);
    return {
      mode,
      processes,
      tillCalls: outputs.reduce((sum, output) => sum + output.tillCalls, 0),
      tillErrors: outputs.reduce((sum, output) => sum + output.tillErrors.length, 0),
      waitP50Ms: round(percentile(waits, 50), 1),
      waitP95Ms: round(percentile(waits, 95), 1),
      waitMaxMs: round(Math.max(0, ...waits), 1),
      requests: sent.length,
      elapsedS: round(elapsedS, 2),
      budgetUsedPct: round((sent.length / (EGRESS.burst + (EGRESS.requestsPerMinute / 60) * elapsedS)) * 100, 2),
      pacedUsedPct: round((paced.length / ((EGRESS.requestsPerMinute / 60) * Math.max(1, elapsedS - 10))) * 100, 2),
      status429Total: sent.filter((request) => request.status === 429).length,
      status429AfterFirstSecond: sent.filter((request) => request.status === 429 && request.at - t0 >= 1_000).length,
      batches: outputs.reduce((sum, output) => sum + output.batches, 0),
    };
  } finally {
    await redis?.stop();
    await sandbox.stop();
  }
}

export const tenantsBudgetFigure: Figure = {
  name: 'tenants-budget',
  title: '50 tenants on one egress budget: fair vs first come first served, 1 and 4 processes',
  async run(): Promise<FigureResult> {
    const scenarios: Scenario[] = [
      { mode: 'fair', processes: 1 },
      { mode: 'fcfs', processes: 1 },
      { mode: 'fair', processes: 4 },
      { mode: 'fcfs', processes: 4 },
    ];
    const runs: ScenarioResult[] = [];
    for (const scenario of scenarios) runs.push(await runScenario(scenario));
    const find = (mode: Scenario['mode'], processes: number) => runs.find((run) => run.mode === mode && run.processes === processes)!;
    const figures: Record<string, number> = {};
    const targets: TargetCheck[] = [];
    for (const processes of [1, 4]) {
      const fair = find('fair', processes);
      const fcfs = find('fcfs', processes);
      const p = `${processes}p`;
      figures[`tenants_budget_${p}_wait_p50_ms`] = fair.waitP50Ms;
      figures[`tenants_budget_${p}_wait_p95_ms`] = fair.waitP95Ms;
      figures[`tenants_budget_${p}_fcfs_wait_p95_ms`] = fcfs.waitP95Ms;
      figures[`tenants_budget_${p}_used_pct`] = fair.budgetUsedPct;
      figures[`tenants_budget_${p}_429_after_first_s`] = fair.status429AfterFirstSecond;
      const goalMs = processes === 1 ? 500 : 2_000;
      targets.push({ target: `tenants budget, ${processes} process(es): the 49's p95 wait < ${goalMs / 1000} s`, met: fair.waitP95Ms < goalMs, measured: `${fair.waitP95Ms} ms (p50 ${fair.waitP50Ms}; first come first served ${fcfs.waitP95Ms} ms)` });
      targets.push({ target: `tenants budget, ${processes} process(es): ≥ 95% of 300/min used`, met: fair.budgetUsedPct >= 95, measured: `${fair.budgetUsedPct.toFixed(1)}% (from 10 s on ${fair.pacedUsedPct.toFixed(1)}%)` });
      targets.push({ target: `tenants budget, ${processes} process(es): 0 429 after the first second`, met: fair.status429AfterFirstSecond === 0, measured: `${fair.status429AfterFirstSecond} (${fair.status429Total} in all)` });
    }
    return { figures, details: { egress: EGRESS, key: KEY, tills: TILLS, everyMs: EVERY_MS, seconds: SECONDS, batchSize: 100, concurrency: 4, runs }, targets };
  },
};
