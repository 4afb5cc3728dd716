// `sync runs` for people (review 3, finding 5): a table with a header that fits the terminal, one
// line per run, the error cut with an ellipsis; piped, every column whole. And with another process
// holding the state's write lock (finding 10): `sync runs` still reads it, and a command that must
// write says the library's sentence naming the file. Run as the CLI on a real SQLite state; the runs
// are recorded through the state itself (no key needed with --all-scopes).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { fileURLToPath } from 'node:url';
import { runCli, startProxiedSandbox } from './helpers.ts';

const lockProcess = fileURLToPath(new URL('../sync/support/lock-process.ts', import.meta.url));

const T0 = Date.parse('2026-11-26T09:41:07.250Z');
const COMPLETED = '3f6c1d2e-8a4b-4c5d-9e6f-0a1b2c3d4e5f';
const FAILED = 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d';
const ERROR = 'ServiceUnavailableError: 503 SERVICE_UNAVAILABLE: the service is in maintenance, try again in a few minutes (PATCH /stock)';
const BASE_URL = 'http://127.0.0.1:4010/integration/v1';

let dir: string;
let state: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-sync-runs-'));
  state = join(dir, 'state.db');
  const store = sqliteSyncState({ path: state });
  try {
    const started = { scope: 'scope-1', baseUrl: BASE_URL, merchantId: 'm_1', full: false };
    await store.startRun({ ...started, runId: COMPLETED, kind: 'catalog', startedAt: T0 });
    await store.finishRun(COMPLETED, { finishedAt: T0 + 4000, outcome: 'completed', complete: true, orphans: 3, error: null, total: 100_000, unchanged: 99_990, sent: 10, created: 2, updated: 8, errors: 0 });
    await store.startRun({ ...started, runId: FAILED, kind: 'stock', startedAt: T0 + 60_000 });
    await store.finishRun(FAILED, { finishedAt: T0 + 61_000, outcome: 'failed', complete: false, orphans: null, error: ERROR, total: 1500, unchanged: 1000, sent: 500, updated: 0, errors: 500 });
  } finally {
    await store.close();
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sync runs', () => {
  test('fits an 80-column terminal: a header, one line per run, the error cut with an ellipsis', async () => {
    const result = await runCli(['sync', 'runs', '--all-scopes', '--state', state], { env: { COLUMNS: '80' } });
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3); // a header and two runs: nothing wrapped
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    // What is left out first: the base URL and merchant, orphans, created, updated, the run id, total.
    expect(lines[0]).toMatch(/^started_at\s+kind\s+outcome\s+unchanged\s+sent\s+errors\s+error$/);
    expect(lines[1]).toMatch(/^2026-11-26T09:42:07Z  stock    failed     1000       500   500     ServiceUnava…$/);
    expect(lines[1]).toHaveLength(80);
    expect(lines[2]).toMatch(/^2026-11-26T09:41:07Z\s+catalog\s+completed\s+99990\s+10\s+0$/);
  });

  test('on a wider terminal the run id comes back whole; piped, every column is whole', async () => {
    const wide = await runCli(['sync', 'runs', '--all-scopes', '--state', state], { env: { COLUMNS: '160' } });
    const wideLines = wide.stdout.trimEnd().split('\n');
    for (const line of wideLines) expect(line.length, line).toBeLessThanOrEqual(160);
    expect(wideLines[0]).toMatch(/^started_at\s+kind\s+outcome\s+total\s+unchanged\s+sent\s+updated\s+errors\s+run_id\s+error\s+merchant_id$/);
    expect(wideLines[1]).toMatch(new RegExp(`${FAILED}  ServiceUnavailableError:…  m_1$`));
    expect(wideLines[2]).toContain(COMPLETED);

    const piped = await runCli(['sync', 'runs', '--all-scopes', '--state', state]);
    const [header, failed, completed] = piped.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^started_at\s+kind\s+outcome\s+total\s+unchanged\s+sent\s+created\s+updated\s+errors\s+orphans\s+run_id\s+error\s+merchant_id\s+base_url$/);
    expect(failed).toContain(`${FAILED}  ${ERROR}  m_1`);
    expect(completed).toMatch(new RegExp(`^2026-11-26T09:41:07Z\\s+catalog\\s+completed\\s+100000\\s+99990\\s+10\\s+2\\s+8\\s+0\\s+3\\s+${COMPLETED}\\s+m_1\\s+${BASE_URL}$`));
  });
});

describe('a state another process holds the write lock of', () => {
  test('sync runs reads it at once; sync forget waits, then says the library\'s sentence naming the file', { timeout: 60_000 }, async () => {
    const service = await startProxiedSandbox();
    const locker = spawn(process.execPath, ['--no-warnings', lockProcess], { env: { ...process.env, SYNC_STATE: state }, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        locker.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
        locker.on('exit', () => reject(new Error('the locking process exited')));
      });
      const listed = await runCli(['sync', 'runs', '--all-scopes', '--state', state, '--json']);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { runId: string }).runId)).toEqual([FAILED, COMPLETED]);

      const env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
      const forgot = await runCli(['sync', 'forget', 'catalog', '--state', state], { env });
      expect(forgot.code).toBe(2);
      expect(forgot.stderr.trim()).toBe(
        `The sync state (SQLite file ${state}) is locked by another process, which held its write lock for more than 5000 ms: let that process finish or stop it (a tool with an open transaction on the file), then run again.`,
      );
    } finally {
      locker.kill('SIGKILL');
      await service.close();
    }
  });
});
