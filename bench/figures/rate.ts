// Figure: rate-limit fidelity. The sandbox's per-key bucket and the client's bucket are set to the
// same rate (1,200/min, burst 120: the real 120/min scaled up tenfold so the run takes under a
// minute; the per-IP bucket is off so it cannot be the one that limits). One run of ≥ 40 s: it is
// a long measurement by itself, and five would not fit the bench's time budget.
import { runWorker, startServer } from '../lib/child.ts';
import type { Figure, FigureResult } from '../lib/figure.ts';
import { round } from '../lib/stats.ts';

const PER_MINUTE = 1_200;
const BURST = 120;
const SECONDS = 42;

interface Output {
  items: number;
  requests: number;
  elapsedS: number;
  allowed: number;
  steadyRequests: number;
  steadySeconds: number;
  pacedRequests: number;
  pacedSeconds: number;
  status429Total: number;
  status429AfterBurst: number;
  status429AfterFirstSecond: number;
  perSecond: number[];
}

export const rateFigure: Figure = {
  name: 'rate',
  title: 'rate-limit fidelity against the sandbox bucket',
  async run(): Promise<FigureResult> {
    const rate = { perKey: { capacity: BURST, refillPerSecond: PER_MINUTE / 60 }, perIp: false };
    const sandbox = await startServer<{ url: string; apiKey: string; storeIds: string[] }>('sandbox-server.ts', [JSON.stringify(rate)]);
    let out: Output;
    try {
      const { url, apiKey, storeIds } = sandbox.info;
      out = await runWorker<Output>('rate-client.ts', [url, apiKey, storeIds[0]!, String(PER_MINUTE), String(BURST), String(SECONDS)]);
    } finally {
      await sandbox.stop();
    }
    // All requests over what the bucket allows in the same time (burst + rate × elapsed).
    const fidelity = (out.requests / out.allowed) * 100;
    // After the first second, the burst is spent; the tokens refilled while it was being sent still
    // go out in the second second, so the pace alone is read from 5 s on.
    const steady = (out.steadyRequests / out.steadySeconds / (PER_MINUTE / 60)) * 100;
    const paced = (out.pacedRequests / out.pacedSeconds / (PER_MINUTE / 60)) * 100;
    return {
      figures: { rate_fidelity_pct: round(fidelity, 2), rate_429_after_first_second: out.status429AfterFirstSecond },
      details: {
        bucket: { requestsPerMinute: PER_MINUTE, burst: BURST, sandboxPerIp: false },
        batchSize: 1,
        concurrency: 4,
        ...out,
        afterFirstSecondPct: round(steady, 2),
        after5sPct: round(paced, 2),
      },
      targets: [
        { target: 'rate: ≥ 97% of the allowed rate', met: fidelity >= 97, measured: `${fidelity.toFixed(1)}% (from 5 s on ${paced.toFixed(1)}%)` },
        // What a user feels: after the first second, no request of theirs is answered 429.
        { target: 'rate: 0 429 after the first second', met: out.status429AfterFirstSecond === 0, measured: `${out.status429AfterFirstSecond} (${out.status429AfterBurst} after the first ${BURST} requests, ${out.status429Total} in all)` },
      ],
    };
  },
};
