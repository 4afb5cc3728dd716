// Figure: the durable inbox, on SQLite and on Postgres. Receiving: deliveries per second through
// inbox.handler against the floor (a bare node:http handler doing the same HMAC check and the same
// single durable insert on the same database), as time per delivery relative to the floor.
// Working: events per second with an empty handler, with 1, 2 and 4 worker processes sharing the store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, runWorker, workerPath } from '../lib/child.ts';
import type { Figure, FigureResult, TargetCheck } from '../lib/figure.ts';
import { startPostgres } from '../lib/postgres-server.ts';
import { median, round } from '../lib/stats.ts';

const PASSES = 7;
const PER_PASS = 1000;
const EVENTS = 4000;
const PROCESSES = [1, 2, 4] as const;

type Store = 'sqlite' | 'postgres';

/** Events worked per second by `processes` worker processes on a store filled with EVENTS entries. */
async function workedPerSecond(db: string, processes: number): Promise<number> {
  await runWorker('inbox-bench.ts', ['fill', db, String(EVENTS)]);
  const started = performance.now();
  await Promise.all(Array.from({ length: processes }, () => runNode([workerPath('inbox-bench.ts'), 'work', db])));
  return EVENTS / ((performance.now() - started) / 1000);
}

async function measure(store: Store, pgUrl: string | undefined) {
  const received = await runWorker<{ sdk: number[]; floor: number[] }>('inbox-bench.ts', ['receive', store === 'sqlite' ? 'sqlite' : `${pgUrl}#bench_receive`, String(PASSES), String(PER_PASS)]);
  // Time per delivery relative to the floor, taken within each pass.
  const xFloor = median(received.sdk.map((sdk, i) => received.floor[i]! / sdk));
  const worked: Record<number, number> = {};
  for (const processes of PROCESSES) {
    if (store === 'postgres') {
      worked[processes] = await workedPerSecond(`${pgUrl}#bench_work_${processes}`, processes);
      continue;
    }
    const dir = mkdtempSync(join(tmpdir(), 'inbox-bench-work-'));
    try {
      worked[processes] = await workedPerSecond(join(dir, 'inbox.db'), processes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { received, xFloor, worked };
}

export const inboxFigure: Figure = {
  name: 'inbox',
  title: 'inbox: deliveries received/s vs floor, events worked/s (1/2/4 workers), SQLite and Postgres',
  async run(): Promise<FigureResult> {
    const sqlite = await measure('sqlite', undefined);
    const server = await startPostgres();
    let postgres: Awaited<ReturnType<typeof measure>>;
    try {
      postgres = await measure('postgres', server.url);
    } finally {
      await server.stop();
    }
    const figures: Record<string, number> = {};
    const details: Record<string, unknown> = { events: EVENTS };
    const targets: TargetCheck[] = [];
    for (const [store, m] of [['sqlite', sqlite], ['postgres', postgres]] as const) {
      figures[`inbox_receive_${store}_x_floor`] = round(m.xFloor);
      figures[`inbox_received_per_s_${store}`] = Math.round(median(m.received.sdk));
      figures[`inbox_worked_per_s_${store}`] = Math.round(m.worked[1]!);
      figures[`inbox_worked_per_s_${store}_2`] = Math.round(m.worked[2]!);
      figures[`inbox_worked_per_s_${store}_4`] = Math.round(m.worked[4]!);
      details[store] = {
        receivedPerSecond: { sdk: m.received.sdk.map(Math.round), floor: m.received.floor.map(Math.round), medianSdk: Math.round(median(m.received.sdk)), medianFloor: Math.round(median(m.received.floor)) },
        // Each worker process run includes its start-up (~0.1–0.3 s), as a deployment would see it.
        workedPerSecond: Object.fromEntries(PROCESSES.map((p) => [`${p} process(es)`, Math.round(m.worked[p]!)])),
      };
      targets.push({ target: `inbox receive (${store}): ≤ 1.30× floor time per delivery`, met: m.xFloor <= 1.3, measured: `${m.xFloor.toFixed(2)}× (${Math.round(median(m.received.sdk))}/s vs floor ${Math.round(median(m.received.floor))}/s)` });
    }
    targets.push({
      target: 'inbox worked (SQLite, empty handler): ≥ 1,000 events/s',
      met: sqlite.worked[1]! >= 1000,
      measured: `${Math.round(sqlite.worked[1]!)}/s (2: ${Math.round(sqlite.worked[2]!)}/s, 4: ${Math.round(sqlite.worked[4]!)}/s)`,
    });
    targets.push({
      target: 'inbox worked (Postgres, empty handler): reported',
      met: true,
      measured: `${Math.round(postgres.worked[1]!)}/s (2: ${Math.round(postgres.worked[2]!)}/s, 4: ${Math.round(postgres.worked[4]!)}/s)`,
    });
    return { figures, details, targets };
  },
};
