// The built bin (dist/cli.js, what `npx integration-sdk` runs): a push, doctor --store and the
// inbox commands against a real SQLite inbox, and the SDK entry free of the CLI's libraries.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sqliteStore } from '../../src/inbox/sqlite/index.ts';
import { runCli, startProxiedSandbox, type CliResult, type ProxiedSandbox } from './helpers.ts';

const root = resolve(import.meta.dirname, '../..');
const outDir = join(root, '.tmp', 'dist-cli-test');
const script = join(outDir, 'cli.js');
let service: ProxiedSandbox;
let dir: string;
let env: Record<string, string>;
const outputs: CliResult[] = [];

async function cli(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<CliResult> {
  const result = await runCli(args, { env: { ...env, ...extraEnv }, script });
  outputs.push(result);
  return result;
}

beforeAll(async () => {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(join(root, 'node_modules', '.bin', 'tsup'), ['--out-dir', outDir, '--silent'], { cwd: root, env: { ...process.env, TSUP_NO_DTS: '1' }, stdio: 'pipe' });
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-built-'));
  env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
}, 120_000);

afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outDir, { recursive: true, force: true });
});

describe('dist/cli.js', () => {
  test('--version and a catalog push of the sample files', async () => {
    const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect((await cli(['--version'])).stdout.trim()).toBe(version.version);
    for (const sample of ['catalog.csv', 'catalog.jsonl', 'catalog.json']) {
      const file = join(dir, sample);
      writeFileSync(file, readFileSync(join(root, 'examples', sample)));
      const result = await cli(['catalog', 'push', file]);
      expect(result.code, `${sample}: ${result.stderr}`).toBe(0);
    }
    expect(service.sandbox.getProduct('SKU-1003')).toMatchObject({ price: 42.345 });
    const stock = join(dir, 'stock.csv');
    writeFileSync(stock, readFileSync(join(root, 'examples', 'stock.csv')));
    expect((await cli(['stock', 'push', stock])).code).toBe(0);
  });

  test('doctor --store and inbox stats | dead | retry | retry-dead on a SQLite inbox', async () => {
    const db = join(dir, 'inbox.db');
    const store = sqliteStore({ path: db });
    await store.migrate();
    const now = Date.now();
    await store.insert({ deliveryId: 'd-dead', event: 'order.created', orderId: 'o-1', ts: 1, payload: '{"phone":"11912345678"}', known: true, receivedAt: now });
    const [claimed] = await store.claim({ now, workerId: 'w', leaseMs: 60_000, limit: 1, orderWaitMs: 0 });
    await store.fail(claimed!.id, { workerId: 'w', error: 'ERP down', now, nextAttemptAt: null });
    await store.close();

    // Dead entries are a warning (the dashboard's banner rules), not a failed check.
    const doctor = await cli(['doctor', '--store', db]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/warn\s+inbox\s+1 dead: .* — 0 pending, 0 processing, 1 dead/);
    const stats = await cli(['inbox', 'stats', '--store', db, '--json']);
    expect(stats.code).toBe(1);
    expect(JSON.parse(stats.stdout)).toMatchObject({ dead: 1, pending: 0 });
    const dead = await cli(['inbox', 'dead', '--store', db]);
    expect(dead.stdout).toMatch(/d-dead\s+order.created\s+.*ERP down/);
    expect((await cli(['inbox', 'retry', 'nope', '--store', db])).code).toBe(1);
    const retried = await cli(['inbox', 'retry-dead'], { INTEGRATION_INBOX_STORE: db });
    expect(retried.stdout).toMatch(/^1 dead entry is pending again\./);
    const after = await cli(['inbox', 'stats', '--store', db, '--json']);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ dead: 0, pending: 1 });
    expect((await cli(['inbox', 'stats', '--store', join(dir, 'missing.db')])).code).toBe(2);
    for (const { stdout, stderr } of outputs) expect(`${stdout}${stderr}`).not.toContain('11912345678');
  });

  test('the SDK entries do not load the CLI libraries', () => {
    for (const entry of ['index.js', 'webhooks.js', 'index.cjs']) {
      const text = readFileSync(join(outDir, entry), 'utf8');
      for (const library of ['commander', 'csv-parse', 'stream-json']) expect(text, entry).not.toContain(`'${library}`);
    }
  });

  test('no output shows the key', () => {
    for (const { stdout, stderr } of outputs) expect(`${stdout}${stderr}`).not.toContain(service.sandbox.keys.full);
  });
});
