// Figure: one key's budget shared through redisRateLimiter by 1, 2, 4 and 8 processes. The
// sandbox's per-key bucket and the shared one are set to the same rate (1,200/min, burst 20: the
// real 120/min scaled tenfold so that each run lasts about 10 s; the per-IP bucket is off). Each
// process runs a bulk upsert of 1-item batches; together they send what the bucket allows in ~10 s.
// A fresh sandbox and a fresh redis-server per process count, so no run inherits a bucket.
import { runWorker, startServer } from '../lib/child.ts';
import type { Figure, FigureResult, TargetCheck } from '../lib/figure.ts';
import { RedisServer } from '../lib/redis-server.ts';
import { round } from '../lib/stats.ts';
import type { SharedRateOutput, SharedRateRun } from '../workers/shared-rate-client.ts';

const PER_MINUTE = 1_200;
const BURST = 20;
const SECONDS = 10;
const PROCESS_COUNTS = [1, 2, 4, 8] as const;

interface RunResult {
  processes: number;
  requests: number;
  elapsedS: number;
  achievedPct: number;
  status429Total: number;
  status429AfterFirstSecond: number;
  redisCallsPerRequest: number;
  fallbackWarnings: number;
}

async function runWith(processes: number): Promise<RunResult> {
  const rate = { perKey: { capacity: BURST, refillPerSecond: PER_MINUTE / 60 }, perIp: false };
  const sandbox = await startServer<{ url: string; apiKey: string; storeIds: string[] }>('sandbox-server.ts', [JSON.stringify(rate)]);
  const redis = await RedisServer.start();
  try {
    const total = BURST + (PER_MINUTE / 60) * SECONDS;
    const outputs = await Promise.all(
      Array.from({ length: processes }, (_, index) => {
        const run: SharedRateRun = {
          redisUrl: redis.url, library: 'redis', sandboxUrl: sandbox.info.url, apiKey: sandbox.info.apiKey, storeId: sandbox.info.storeIds[0]!,
          items: Math.ceil(total / processes), requestsPerMinute: PER_MINUTE, burst: BURST, prefix: `p${index}`,
        };
        return runWorker<SharedRateOutput>('shared-rate-client.ts', [JSON.stringify(run)]);
      }),
    );
    const sent = outputs.flatMap((output) => output.sent).sort((a, b) => a.at - b.at);
    const t0 = sent[0]!.at;
    const elapsedS = (sent.at(-1)!.at - t0) / 1000;
    const requests = sent.length;
    return {
      processes,
      requests,
      elapsedS: round(elapsedS, 2),
      // All requests over what the bucket allows in the same time (burst + rate × elapsed).
      achievedPct: round((requests / (BURST + (PER_MINUTE / 60) * elapsedS)) * 100, 2),
      status429Total: sent.filter((r) => r.status === 429).length,
      status429AfterFirstSecond: sent.filter((r) => r.status === 429 && r.at - t0 >= 1000).length,
      redisCallsPerRequest: round(outputs.reduce((sum, output) => sum + output.redisCalls, 0) / requests, 2),
      fallbackWarnings: outputs.reduce((sum, output) => sum + output.warnings.filter((w) => /cannot reach Redis/.test(w)).length, 0),
    };
  } finally {
    await redis.stop();
    await sandbox.stop();
  }
}

export const sharedRateFigure: Figure = {
  name: 'shared-rate',
  title: 'one key shared by 1, 2, 4 and 8 processes through Redis',
  async run(): Promise<FigureResult> {
    const runs: RunResult[] = [];
    for (const processes of PROCESS_COUNTS) runs.push(await runWith(processes));
    const figures: Record<string, number> = {};
    const targets: TargetCheck[] = [];
    for (const run of runs) {
      figures[`shared_rate_${run.processes}p_pct`] = run.achievedPct;
      targets.push({ target: `shared rate, ${run.processes} process(es): ≥ 95% of the allowed rate`, met: run.achievedPct >= 95, measured: `${run.achievedPct.toFixed(1)}%` });
      targets.push({ target: `shared rate, ${run.processes} process(es): 0 429 after the first second`, met: run.status429AfterFirstSecond === 0, measured: `${run.status429AfterFirstSecond} (${run.status429Total} in all)` });
    }
    figures.shared_rate_429_after_first_s = runs.reduce((sum, run) => sum + run.status429AfterFirstSecond, 0);
    figures.shared_rate_redis_calls_per_request = Math.max(...runs.map((run) => run.redisCallsPerRequest));
    return { figures, details: { bucket: { requestsPerMinute: PER_MINUTE, burst: BURST, sandboxPerIp: false }, batchSize: 1, concurrency: 4, runs }, targets };
  },
};
