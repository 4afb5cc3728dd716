// Figure: memory per connected tenant in one process (docs/tenants.md, "Scale"): 10,000 tenants
// connected against the sandbox (in its own process), passed to client() and each having received
// one delivery through an inbox given the registry, against the retained size of one plain
// IntegrationClient measured in the same process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, startServer, workerPath } from '../lib/child.ts';
import type { Figure, FigureResult } from '../lib/figure.ts';
import { round } from '../lib/stats.ts';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 10_000);
const STEPS = 'connect,client,deliver';
/** docs/tenants.md: under 50 KB per tenant. */
const TARGET_KB = 50;

interface Run {
  tenants: number;
  steps: string[];
  bytesPerTenant: number;
  plainClientBytes: number;
  connectS: number;
  heapUsedMb: number;
}

export const tenantsFigure: Figure = {
  name: 'tenants',
  title: `memory per tenant, ${TENANTS.toLocaleString('en')} connected tenants (${STEPS})`,
  async run(): Promise<FigureResult> {
    const dir = mkdtempSync(join(tmpdir(), 'bench-tenants-'));
    const server = await startServer<{ url: string; receiverUrl: string }>('tenants-sandbox.ts', [String(TENANTS), join(dir, 'keys.json')]);
    let run: Run;
    try {
      // 10,000 real connects (five requests each) take minutes on a shared machine: a longer limit than other workers'.
      const { stdout } = await runNode(['--expose-gc', workerPath('tenants-memory.ts'), server.info.url, server.info.receiverUrl, join(dir, 'keys.json'), join(dir, 'tenants.db'), STEPS], { timeoutMs: 1_200_000 });
      run = JSON.parse(stdout.trim().split('\n').at(-1)!) as Run;
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    const kb = run.bytesPerTenant / 1024;
    return {
      figures: { tenants_memory_kb_per_tenant: round(kb, 2), tenants_memory_x_client: round(run.bytesPerTenant / run.plainClientBytes, 3) },
      details: { ...run, plainClientKb: round(run.plainClientBytes / 1024, 2), definition: '(heapUsed + external) after a GC, minus the same before createTenants, divided by the tenants' },
      targets: [{ target: `tenants: memory per connected tenant < ${TARGET_KB} KB`, met: kb < TARGET_KB, measured: `${kb.toFixed(2)} KB (${(run.bytesPerTenant / run.plainClientBytes).toFixed(2)}× one plain IntegrationClient)` }],
    };
  },
};
