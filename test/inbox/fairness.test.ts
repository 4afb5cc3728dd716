// Fair claiming across tenants (issue 28), with workers in two processes on one store: while one
// tenant's backlog drains, another tenant's new order completes within one claim round, before
// more than 2 × concurrency (of all workers) of the busy tenant's entries complete after it was
// stored; also when thousands of other tenants have entries waiting for a retry, and more tenants
// than one claim looks at have due entries that cannot run yet. On SQLite (one file) and on a real
// Postgres.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { InboxStore, NewInboxEntry } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { usePostgres } from './support/postgres.ts';
import { tempDir } from './support/temp-dir.ts';

const script = fileURLToPath(new URL('./support/fair-worker.ts', import.meta.url));
const dir = tempDir('inbox-fairness');
const postgres = usePostgres();
const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});
afterAll(() => dir.remove());

const BACKLOG = 1500;
const CONCURRENCY = 4;
const WORKERS = 2;

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--no-warnings', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code, signal) => reject(new Error(`worker exited early (${code ?? signal})`)));
  });
}

let n = 0;
const order = (tenant: string, receivedAt: number): NewInboxEntry => {
  const orderId = `order-${++n}`;
  return { tenant, deliveryId: `delivery-${n}`, event: 'order.created', orderId, ts: 1, payload: JSON.stringify({ event: 'order.created', data: { order_id: orderId } }), known: true, receivedAt };
};

/**
 * Tenants between the busy and the quiet one in the claims' order: `waiting` each with an entry
 * whose run failed and waits an hour for its retry (an ERP outage), and `blocked` each with a due
 * status change that cannot run yet (its order.created has not arrived).
 */
async function otherTenants(store: InboxStore, { waiting, blocked }: { waiting: number; blocked: number }): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < waiting; i += 1) await store.insert({ ...order(`c-waiting-${String(i).padStart(4, '0')}`, now), event: 'webhook.test' });
  for (let claimed = await claimMany(store, now); claimed.length > 0; claimed = await claimMany(store, now)) {
    for (const each of claimed) await store.fail(each.id, { workerId: 'setup', tenant: each.tenant, error: 'Error: the ERP is down', now, nextAttemptAt: now + 3_600_000 });
  }
  for (let i = 0; i < blocked; i += 1) await store.insert({ ...order(`c-blocked-${String(i).padStart(4, '0')}`, now), event: 'order.status_changed' });
}
const claimMany = (store: InboxStore, now: number) => store.claim({ workerId: 'setup', now, leaseMs: 60_000, limit: 500, orderWaitMs: 600_000 });

type Line = { done?: string; tenant?: string; stored?: string };
const linesOf = (effects: string): Line[] =>
  readFileSync(effects, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);

async function quietOrderWaits(store: InboxStore, effects: string, workerEnv: Record<string, string>, others = { waiting: 0, blocked: 0 }): Promise<{ busyAfter: number; busyLeft: number }> {
  await store.migrate();
  await otherTenants(store, others);
  // The busy tenant's backlog, all due before the quiet tenant's order arrives.
  const start = Date.now() - 60_000;
  for (let i = 0; i < BACKLOG; i += 1) await store.insert(order('busy', start + i));
  writeFileSync(effects, '');
  await Promise.all(Array.from({ length: WORKERS }, () => startWorker({ ...workerEnv, FAIR_EFFECTS: effects, FAIR_CONCURRENCY: String(CONCURRENCY), FAIR_HANDLER_MS: '4' })));
  // Draining: a tenth of the backlog is done.
  await expect.poll(() => linesOf(effects).length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(BACKLOG / 10);
  const quiet = order('quiet', Date.now());
  await store.insert(quiet);
  appendFileSync(effects, `${JSON.stringify({ stored: quiet.deliveryId })}\n`);
  await expect.poll(() => linesOf(effects).some((line) => line.done === quiet.deliveryId), { timeout: 60_000, interval: 20 }).toBe(true);
  const lines = linesOf(effects);
  const from = lines.findIndex((line) => line.stored === quiet.deliveryId);
  const to = lines.findIndex((line) => line.done === quiet.deliveryId);
  expect(lines[to]).toMatchObject({ tenant: 'quiet' });
  const busyDone = lines.filter((line) => line.tenant === 'busy').length;
  return { busyAfter: lines.slice(from, to).filter((line) => line.tenant === 'busy').length, busyLeft: BACKLOG - busyDone };
}

/** The store of one run, and how the worker processes reach it. */
function storeOf(kind: 'SQLite' | 'Postgres', name: string): { store: InboxStore; env: Record<string, string> } {
  if (kind === 'SQLite') {
    const path = `${dir.path}/${name}.db`;
    return { store: sqliteStore({ path }), env: { FAIR_DB: path } };
  }
  const schema = `${name}_${process.pid}`;
  return { store: postgresStore({ connectionString: postgres.current.url, schema }), env: { FAIR_PG_URL: postgres.current.url, FAIR_PG_SCHEMA: schema } };
}

const CROWD = { waiting: 3000, blocked: 150 };

describe("a busy tenant's backlog does not delay another tenant's new order past one claim round (workers in two processes)", () => {
  it.each([
    ['SQLite', 'fair', { waiting: 0, blocked: 0 }],
    ['Postgres', 'fair', { waiting: 0, blocked: 0 }],
    ['SQLite', 'fair_crowd', CROWD],
    ['Postgres', 'fair_crowd', CROWD],
  ] as const)('on %s (%s: other tenants %o)', async (kind, name, others) => {
    // fair_crowd: 3,000 tenants waiting for a retry, and 150 whose due entries cannot run yet.
    const { store, env } = storeOf(kind, name);
    try {
      const { busyAfter, busyLeft } = await quietOrderWaits(store, `${dir.path}/${kind}-${name}-effects.jsonl`, env, others);
      expect(busyAfter).toBeLessThanOrEqual(2 * CONCURRENCY * WORKERS);
      expect(busyLeft).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 180_000);
});
