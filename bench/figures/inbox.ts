// Figure: the durable inbox. Receiving: deliveries per second through inbox.handler on SQLite
// against the floor (a bare node:http handler doing the same HMAC check and the same single durable
// insert), as time per delivery relative to the floor. Working: events per second with an empty
// handler on SQLite, with 1, 2 and 4 worker processes sharing the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, runWorker, workerPath } from '../lib/child.ts';
import type { Figure, FigureResult } from '../lib/figure.ts';
import { median, round } from '../lib/stats.ts';

const PASSES = 7;
const PER_PASS = 1000;
const EVENTS = 4000;

async function workedPerSecond(processes: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-bench-work-'));
  const db = join(dir, 'inbox.db');
  try {
    await runWorker('inbox-bench.ts', ['fill', db, String(EVENTS)]);
    const started = performance.now();
    await Promise.all(Array.from({ length: processes }, () => runNode([workerPath('inbox-bench.ts'), 'work', db])));
    return EVENTS / ((performance.now() - started) / 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const inboxFigure: Figure = {
  name: 'inbox',
  title: 'inbox: deliveries received/s vs floor, events worked/s (1/2/4 workers)',
  async run(): Promise<FigureResult> {
    const received = await runWorker<{ sdk: number[]; floor: number[] }>('inbox-bench.ts', ['receive', String(PASSES), String(PER_PASS)]);
    // Time per delivery relative to the floor, taken within each pass.
    const xFloor = median(received.sdk.map((sdk, i) => received.floor[i]! / sdk));
    const worked: Record<string, number> = {};
    for (const processes of [1, 2, 4]) worked[processes] = await workedPerSecond(processes);
    // Each worker process run includes its start-up (~0.1–0.3 s), as a deployment would see it.
    return {
      figures: {
        inbox_receive_sqlite_x_floor: round(xFloor),
        inbox_worked_per_s_sqlite: Math.round(worked[1]!),
        inbox_worked_per_s_sqlite_2: Math.round(worked[2]!),
        inbox_worked_per_s_sqlite_4: Math.round(worked[4]!),
      },
      details: {
        receivedPerSecond: { sdk: received.sdk.map(Math.round), floor: received.floor.map(Math.round), medianSdk: Math.round(median(received.sdk)), medianFloor: Math.round(median(received.floor)) },
        workedPerSecond: Object.fromEntries(Object.entries(worked).map(([key, value]) => [`${key} process(es)`, Math.round(value)])),
        events: EVENTS,
      },
      targets: [
        { target: 'inbox receive (SQLite): ≤ 1.30× floor time per delivery', met: xFloor <= 1.3, measured: `${xFloor.toFixed(2)}×` },
        { target: 'inbox worked (SQLite, empty handler): ≥ 1,000 events/s', met: worked[1]! >= 1000, measured: `${Math.round(worked[1]!)}/s (2: ${Math.round(worked[2]!)}/s, 4: ${Math.round(worked[4]!)}/s)` },
      ],
    };
  },
};
