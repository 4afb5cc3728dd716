// A sync run killed with SIGKILL mid-way: the next run sends only what the service had not
// acknowledged, and nothing is remembered as sent that the service did not confirm.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { createSync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { clientFor, startSandbox, type Exchange } from '../e2e/helpers.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';

const script = fileURLToPath(new URL('./support/sync-process.ts', import.meta.url));
const dir = tempDir('sync-crash');
afterAll(() => dir.remove());

const COUNT = 2000;
const BATCH = 50;

test('a run killed with SIGKILL mid-way resends only the unacknowledged on the next run', async () => {
  const sandbox = await startSandbox();
  const state = `${dir.path}/state.db`;
  const child = spawn(process.execPath, ['--no-warnings', script], {
    env: { ...process.env, SYNC_URL: sandbox.url, SYNC_KEY: sandbox.apiKey, SYNC_STATE: state, SYNC_ITEMS: String(COUNT) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let reported = 0;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        const match = /^acked (\d+)/.exec(line);
        if (match) reported = Math.max(reported, Number(match[1]));
        if (reported >= 10 * BATCH) resolve();
        if (line === 'done') reject(new Error('the run finished before the kill'));
      }
    });
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');

  // The dead run's lease expires within a minute: a clock 61 s ahead finds it free.
  const { client, exchanges } = clientFor(sandbox, { clock: { now: () => Date.now() + 61_000, setTimeout: (cb, ms) => { const t = setTimeout(cb, ms); return () => clearTimeout(t); } } });
  const sync = createSync({ client, state: sqliteSyncState({ path: state }), clock: { now: () => Date.now() + 61_000, setTimeout: () => () => {} } });
  const presentBefore = new Set(Array.from({ length: COUNT }, (_, i) => i).filter((i) => sandbox.getProduct(`CRASH-${i}`) !== undefined));
  const items = Array.from({ length: COUNT }, (_, i) => ({ external_id: `CRASH-${i}`, name: `Product ${i}`, price: 1 }));
  const resent = await sync.catalog(items, { batchSize: BATCH });
  const sent = exchanges
    .filter((e: Exchange) => e.method === 'POST')
    .flatMap((e) => (e.body as { items: { external_id: string }[] }).items.map((item) => Number(item.external_id.slice('CRASH-'.length))));
  // Only a tail from the first unacknowledged item: nothing reported acknowledged is sent again,
  // and at most the batch that was in flight when the kill landed had reached the service.
  const first = sent[0]!;
  expect(first).toBeGreaterThanOrEqual(reported);
  expect(first).toBeLessThanOrEqual(reported + 2 * BATCH);
  expect(sent).toEqual(Array.from({ length: COUNT - first }, (_, i) => first + i));
  expect(resent).toMatchObject({ total: COUNT, unchanged: first, sent: COUNT - first, errors: 0 });
  const alreadyThere = sent.filter((i) => presentBefore.has(i));
  expect(alreadyThere.length).toBeLessThanOrEqual(BATCH);
  const runs = [];
  for await (const run of sync.runs()) runs.push(run);
  expect(runs.map((run) => run.outcome)).toEqual(['completed', 'interrupted']);
  await sync.close();
}, 60_000);
