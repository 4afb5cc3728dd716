// `doctor --store` as a real process against the sandbox: the inbox judged by the dashboard's banner
// rules (src/inbox/health.ts): work waiting over a minute with no worker claim is a failure, dead
// entries a warning. The entries and heartbeats are written to the SQLite file as a receiver and a
// worker would, with their times set back.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NewInboxEntry } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { runCli } from './helpers.ts';

const MINUTE = 60_000;
const dir = tempDir('cli-doctor');
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await createSandbox({ rate: false });
  env = { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url, INTEGRATION_RATE_LIMIT: 'off' };
});

afterAll(async () => {
  await sandbox.close();
  dir.remove();
});

let n = 0;
const entry = (receivedAt: number): NewInboxEntry => {
  n += 1;
  return { deliveryId: `d-${n}`, event: 'stock.changed', orderId: null, ts: Math.floor(receivedAt / 1000), payload: '{}', known: false, receivedAt };
};

describe('doctor --store', () => {
  test('fails while entries wait over a minute and no worker has claimed in the last minute; a worker claiming clears it', async () => {
    const path = `${dir.path}/waiting.db`;
    const store = sqliteStore({ path });
    await store.migrate();
    const now = Date.now();
    for (let i = 0; i < 4; i += 1) await store.insert(entry(now - 4 * MINUTE + i * 1000));
    // A worker was seen, but 5 minutes ago.
    await store.heartbeat!({ workerId: 'w-gone', now: now - 5 * MINUTE, claimed: true });
    await store.close();

    const stalled = await runCli(['doctor', '--store', path], { env });
    expect(stalled.code).toBe(1);
    expect(stalled.stdout).toMatch(/^fail\s+inbox\s+no worker is running: 4 entries wait, the oldest for 4 min \(last claim 5 min ago\); start the process that calls inbox\.startWorker\(\)/m);

    const again = sqliteStore({ path });
    await again.heartbeat!({ workerId: 'w-1', now: Date.now(), claimed: false });
    await again.close();
    const running = await runCli(['doctor', '--store', path], { env });
    expect(running.stdout).toMatch(/^ok\s+inbox\s+4 pending \(oldest 4 min\), 0 processing, 0 dead$/m);
    expect(running.code).toBe(0);
  }, 30_000);

  test('warns about dead entries without failing', async () => {
    const path = `${dir.path}/dead.db`;
    const store = sqliteStore({ path });
    await store.migrate();
    const now = Date.now();
    await store.insert(entry(now - 10 * MINUTE));
    const [claimed] = await store.claim({ workerId: 'w-1', now, leaseMs: MINUTE, limit: 1, orderWaitMs: 0 });
    await store.fail(claimed!.id, { workerId: 'w-1', error: 'Error: ERP down', now, nextAttemptAt: null });
    await store.heartbeat!({ workerId: 'w-1', now, claimed: true });
    await store.close();
    const result = await runCli(['doctor', '--store', path], { env });
    expect(result.stdout).toMatch(/^warn\s+inbox\s+1 dead: see `integration-sdk inbox dead`/m);
    expect(result.stdout).not.toMatch(/^fail/m);
    expect(result.code).toBe(0);
  }, 30_000);
});
