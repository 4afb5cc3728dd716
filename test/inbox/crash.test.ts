import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { createSandbox } from 'integration-sdk/sandbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { api } from '../sandbox/helpers.ts';
import { tempDir } from './support/temp-dir.ts';
import { freePort } from '../../bench/lib/free-port.ts';

const script = fileURLToPath(new URL('./support/inbox-process.ts', import.meta.url));
const dir = tempDir('inbox-crash');
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  dir.remove();
});

function startProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--no-warnings', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code, signal) => reject(new Error(`inbox process exited early (${code ?? signal})`)));
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('receiver and workers SIGKILLed at random moments lose no order event; only runs cut short by a kill repeat', async () => {
  const db = `${dir.path}/inbox.db`;
  const effects = `${dir.path}/effects.jsonl`;
  const port = await freePort();
  // Retries after 0.18 s, 0.9 s, 5.4 s, ...: a receiver down for a moment is retried soon.
  const sandbox = await createSandbox({ rate: false, timeScale: 0.003 });
  const created = await api(sandbox)('POST', '/webhooks', { url: `http://127.0.0.1:${port}/webhooks`, events: ['order.created', 'order.status_changed'] });
  const { secret } = created.body as { secret: string };
  const common = { INBOX_DB: db, INBOX_EFFECTS: effects, INBOX_SECRET: secret };
  const roles = { receiver: { ...common, INBOX_PORT: String(port) }, worker: common };
  const running: Record<keyof typeof roles, ChildProcess> = { receiver: await startProcess(roles.receiver), worker: await startProcess(roles.worker) };
  const killed = new Set<number>();

  let producing = true;
  const killer = (async () => {
    while (producing) {
      await pause(300 + Math.random() * 500);
      const role = Math.random() < 0.5 ? 'receiver' : 'worker';
      killed.add(running[role].pid!);
      running[role].kill('SIGKILL');
      await pause(Math.random() * 200);
      running[role] = await startProcess(roles[role]);
    }
  })();

  const orderIds: string[] = [];
  // 30 batches, and more until three kills have landed (restarts are slow on a loaded machine).
  for (let batch = 0; batch < 30 || killed.size < 3; batch += 1) {
    for (let i = 0; i < 8; i += 1) {
      const order = sandbox.createOrder();
      orderIds.push(order.order_id);
      if (i % 2 === 0) sandbox.setOrderStatus(order.order_id, i % 4 === 0 ? 'cancelled' : 'dispatched');
    }
    await pause(100);
  }
  producing = false;
  await killer;
  expect(killed.size).toBeGreaterThanOrEqual(3);
  await sandbox.idle();

  const deliveries = sandbox.deliveries();
  expect(deliveries.length).toBe(orderIds.length * 1.5); // order.created, and half change status
  expect(deliveries.filter((delivery) => delivery.status !== 'delivered')).toEqual([]);

  // Leases of killed workers expire (1.5 s), and the survivors finish everything.
  const store = sqliteStore({ path: db });
  for (let waited = 0; ; waited += 200) {
    const stats = await store.stats(Date.now());
    if (stats.pending === 0 && stats.processing === 0) break;
    if (waited > 30_000) throw new Error(`the inbox did not drain: ${JSON.stringify(stats)}`);
    await pause(200);
  }
  for (const delivery of deliveries) expect((await store.get(delivery.id))?.status, delivery.id).toBe('done');
  expect((await store.stats(Date.now())).dead).toBe(0);
  await store.close();

  const lines = readFileSync(effects, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { phase: string; id: string; pid: number; event: string; order: string });
  for (const delivery of deliveries) {
    const runs = lines.filter((line) => line.id === delivery.id);
    expect(runs.some((line) => line.phase === 'end'), `${delivery.id} completed`).toBe(true);
    const starts = runs.filter((line) => line.phase === 'start');
    // A second run happens only when a worker was killed with the entry in hand.
    if (starts.length > 1) expect(starts.slice(0, -1).every((line) => killed.has(line.pid)), `${delivery.id} repeated without a kill`).toBe(true);
  }
  // Per order: the status change starts only after the order.created run completed.
  for (const orderId of orderIds) {
    const ofOrder = lines.filter((line) => line.order === orderId);
    const createdEnd = ofOrder.findIndex((line) => line.event === 'order.created' && line.phase === 'end');
    const changeStart = ofOrder.findIndex((line) => line.event === 'order.status_changed' && line.phase === 'start');
    if (changeStart !== -1) expect(changeStart, orderId).toBeGreaterThan(createdEnd);
  }
  await sandbox.close();
  expect(existsSync(db)).toBe(true);
}, 120_000);
