// What the CLI says when what it talks to fails (the service unreachable, the inbox's Postgres
// refusing, its SQLite file locked by another process): one sentence saying what to do, never the
// raw system text; and `inbox dead` lists every dead entry, however many.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sqliteStore } from '../../src/inbox/sqlite/index.ts';
import { runCli, startProxiedSandbox } from './helpers.ts';

const RAW = /ECONNREFUSED|database is locked|attempt \d|^Error:/m;
let dir: string;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** A SQLite inbox with `count` dead entries: one through the store, the rest copied from it in one transaction. */
async function inboxWithDead(path: string, count: number): Promise<void> {
  const store = sqliteStore({ path });
  await store.migrate();
  const now = Date.now();
  await store.insert({ deliveryId: 'dead-0', event: 'order.created', orderId: 'order-0', ts: 1, payload: '{"phone":"11912345678"}', known: true, receivedAt: now });
  const [claimed] = await store.claim({ now, workerId: 'w', leaseMs: 60_000, limit: 1, orderWaitMs: 0 });
  await store.fail(claimed!.id, { workerId: 'w', error: 'ERP down', now, nextAttemptAt: null });
  await store.close();
  const db = new DatabaseSync(path);
  const columns = (db.prepare('PRAGMA table_info(inbox_entries)').all() as Array<{ name: string }>).map((c) => c.name).filter((c) => c !== 'seq');
  const copied = columns.map((c) => (c === 'delivery_id' ? `'dead-' || n` : c === 'order_id' ? `'order-' || n` : c === 'received_at' ? 'received_at + n' : c));
  db.exec(`WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < ${count - 1})
    INSERT INTO inbox_entries (${columns.join(', ')}) SELECT ${copied.join(', ')} FROM inbox_entries, series WHERE delivery_id = 'dead-0'`);
  db.close();
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-failures-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('the service unreachable: one sentence naming the cause in words and what to do, exit 2', async () => {
  const env = { INTEGRATION_API_KEY: 'service_k1_abcdefghijklmnopqrstuvwx', INTEGRATION_BASE_URL: `http://127.0.0.1:${await closedPort()}/integration/v1` };
  const result = await runCli(['webhooks', 'list'], { env });
  expect(result.code).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Cannot reach the service \(connection refused: nothing is listening at that address and port\): check INTEGRATION_BASE_URL .*again\.$/)]);
  expect(result.stderr).not.toMatch(RAW);
  const doctor = await runCli(['doctor'], { env });
  expect(doctor.stdout).toMatch(/fail\s+service\s+cannot reach the service \(connection refused/);
  expect(doctor.stdout).not.toMatch(RAW);
}, 30_000);

test("the inbox's Postgres refusing connections: one sentence, exit 2, the password never shown", async () => {
  const url = `postgres://erp:s3cret-pw@127.0.0.1:${await closedPort()}/inbox`;
  const result = await runCli(['inbox', 'stats'], { env: { INTEGRATION_INBOX_STORE: url } });
  expect(result.code).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Cannot open the inbox store \(connection refused.*\): check the location given by --store or INTEGRATION_INBOX_STORE/)]);
  expect(result.stderr).not.toMatch(RAW);
  const doctor = await runCli(['doctor'], { env: { INTEGRATION_INBOX_STORE: url } });
  expect(doctor.stdout).toMatch(/fail\s+inbox\s+Cannot open the inbox store \(connection refused/);
  for (const output of [result, doctor]) expect(`${output.stdout}${output.stderr}`).not.toContain('s3cret-pw');
}, 30_000);

test('the SQLite inbox locked by another process: one sentence saying to try again, exit 2', async () => {
  const path = join(dir, 'locked.db');
  await inboxWithDead(path, 1);
  // Another process holds the write lock.
  const holder = spawn(process.execPath, ['-e', `const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(${JSON.stringify(path)}); db.exec('BEGIN EXCLUSIVE'); console.log('locked'); setTimeout(() => {}, 60000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await once(holder.stdout!, 'data');
    const result = await runCli(['inbox', 'retry-dead', '--store', path]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^The inbox database is busy, another process holding its write lock .*try again in a moment/)]);
    expect(result.stderr).not.toMatch(RAW);
  } finally {
    holder.kill();
  }
}, 60_000);

test('a --store file that is not a SQLite database: one sentence saying so, exit 2', async () => {
  const path = join(dir, 'notes.db');
  writeFileSync(path, 'meeting notes, not a database '.repeat(20));
  const result = await runCli(['inbox', 'stats', '--store', path]);
  expect(result.code).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^The file given to --store .*is not a SQLite database: check the path/)]);
});

test('inbox dead lists every dead entry, past 10,000', async () => {
  const path = join(dir, 'many.db');
  await inboxWithDead(path, 10_250);
  const result = await runCli(['inbox', 'dead', '--store', path, '--json']);
  expect(result.code).toBe(1);
  const rows = JSON.parse(result.stdout) as Array<{ deliveryId: string }>;
  expect(rows).toHaveLength(10_250);
  expect(new Set(rows.map((r) => r.deliveryId)).size).toBe(10_250);
  expect(rows.at(-1)!.deliveryId).toBe('dead-10249');
  const table = await runCli(['inbox', 'dead', '--store', path]);
  expect(table.stdout.trim().split('\n')).toHaveLength(10_251); // the header and every entry
  expect(table.stdout).not.toContain('11912345678');
  // Human-readable output names fields in snake_case, as the wire and the rest of the CLI do.
  expect(table.stdout.split('\n')[0]).toMatch(/^delivery_id\s+event\s+order\s+order_id\s+attempts\s+last_error\s+received_at$/);
  const stats = await runCli(['inbox', 'stats', '--store', path]);
  expect(stats.stdout).toMatch(/^dead\s+10250$/m);
  expect(stats.stdout).toMatch(/^oldest_pending_age_ms\s+0$/m);
}, 60_000);

test('a push the service keeps answering 429 after the retries: one sentence naming the likely cause, the resume hint, exit 2', async () => {
  const service = await startProxiedSandbox();
  try {
    service.sandbox.setFaults({ rate: 1, kinds: ['error429'] });
    const file = join(dir, 'throttled.csv');
    writeFileSync(file, 'external_id,name,price\nR-1,r,1\n');
    const result = await runCli(['catalog', 'push', file], { env: { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl } });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^catalog push stopped: The service kept answering 429 .*another process is probably using the same key.*run the same command again to start over\)\.$/)]);
    expect(result.stderr).not.toMatch(/RateLimitError|RATE_LIMITED/);
  } finally {
    await service.close();
  }
}, 60_000);

test('another sync run holding the lease: its own sentence (the run and its start, what to do), exit 2, not an unexpected error', async () => {
  const { failure } = await import('../../src/cli/failure.ts');
  const { SyncRunInProgressError } = await import('../../src/sync/errors.ts');
  const held = failure(new SyncRunInProgressError('catalog', 'run-1', Date.UTC(2026, 10, 26, 9)));
  expect(held.code).toBe(2);
  expect(held.message).toMatch(/^A catalog sync run is already in progress .*run run-1, started 2026-11-26T09:00:00\.000Z/);
  expect(held.message).not.toMatch(/Unexpected error/);
});
