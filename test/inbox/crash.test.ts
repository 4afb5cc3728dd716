// The inbox survives crashes: a receiver+worker process is SIGKILLed at random moments while the
// sandbox delivers orders and status changes, and started again. At the end every delivery the
// sandbox reports delivered is done in the inbox, its handler finished at least once, and only
// entries whose worker was killed while running them ran twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { IntegrationClient } from '../../src/index.ts';
import { sqliteStore } from '../../src/inbox/sqlite/index.ts';
import { createSandbox } from '../../src/sandbox/index.ts';
import { freePort, tempDir } from './support.ts';

const root = join(import.meta.dirname, '../..');

function startChild(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--no-warnings', '--import', join(root, 'test/support/register-src.mjs'), join(import.meta.dirname, 'crash-child.ts'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

it('SIGKILLed four times while orders arrive: every delivered event is done, none lost', async () => {
  const dir = tempDir();
  const db = dir.path('inbox.db');
  const log = dir.path('handled.log');
  writeFileSync(log, '');
  const port = await freePort();
  const sandbox = await createSandbox({ timeScale: 0.001, rate: false });
  let child: ChildProcess | undefined;
  try {
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, rateLimit: false });
    const endpoint = await client.webhooks.create({ url: `http://127.0.0.1:${port}/hooks`, events: ['order.created', 'order.status_changed'] });
    const args = [String(port), db, endpoint.secret, log];
    child = await startChild(args);

    const kills = 4;
    for (let round = 0; round < kills; round++) {
      for (let i = 0; i < 15; i++) {
        const order = sandbox.createOrder();
        if (i % 3 === 0) sandbox.setOrderStatus(order.order_id, 'cancelled');
      }
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
      await kill(child);
      await new Promise((resolve) => setTimeout(resolve, 100));
      child = await startChild(args);
    }
    await sandbox.idle();
    const store = sqliteStore({ path: db });
    try {
      await expect.poll(async () => { const s = await store.stats(Date.now()); return s.pending + s.processing; }, { timeout: 60_000, interval: 200 }).toBe(0);
      const deliveries = sandbox.deliveries({ webhookId: endpoint.id });
      expect(deliveries.length).toBe(kills * 20);
      expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
      const entries = await store.entries({ limit: 10_000 });
      const done = new Set(entries.filter((e) => e.status === 'done').map((e) => e.deliveryId));
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      const ends = new Set(lines.filter((l) => l.startsWith('end ')).map((l) => l.slice(4)));
      const starts = new Map<string, number>();
      for (const line of lines.filter((l) => l.startsWith('start '))) starts.set(line.slice(6), (starts.get(line.slice(6)) ?? 0) + 1);
      expect(done.size).toBe(deliveries.length);
      for (const id of done) expect(ends.has(id)).toBe(true);
      // Run twice only when a kill interrupted a run: at most `concurrency` (2) per kill.
      const twice = [...starts.values()].filter((n) => n > 1).length;
      expect(twice).toBeLessThanOrEqual(kills * 2);
    } finally {
      await store.close();
    }
  } finally {
    if (child) await kill(child);
    await sandbox.close();
    dir.remove();
  }
}, 180_000);
