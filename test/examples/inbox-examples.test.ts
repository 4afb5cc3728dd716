// The inbox examples are servers a user starts: run the Express one as a real process, let the
// sandbox deliver a real order to it, and check its worker handled the order and its status change.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createSandbox } from 'integration-sdk/sandbox';
import { api } from '../sandbox/helpers.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { freePort } from '../../bench/lib/free-port.ts';

const root = resolve(import.meta.dirname, '../..');
const dir = tempDir('inbox-example');
afterAll(() => dir.remove());

it('inbox-express.ts receives the sandbox order, then works it and its status change in order', async () => {
  const sandbox = await createSandbox({ rate: false });
  const port = await freePort();
  const created = await api(sandbox)('POST', '/webhooks', { url: `http://127.0.0.1:${port}/webhooks/integration`, events: ['order.created', 'order.status_changed'] });
  const { secret } = created.body as { secret: string };
  const child = spawn(process.execPath, ['--import', join(root, 'test/support/register-src.mjs'), join(root, 'examples', 'inbox-express.ts')], {
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port), INBOX_PATH: join(dir.path, 'inbox.db'), NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  try {
    // The server is up once it answers (400 to an unsigned POST).
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/webhooks/integration`, { method: 'POST' }).catch(() => undefined))?.status, { timeout: 15_000 }).toBe(400);
    const order = sandbox.createOrder();
    sandbox.setOrderStatus(order.order_id, 'cancelled');
    await sandbox.idle();
    await expect.poll(() => stdout, { timeout: 10_000 }).toContain(`order #${order.display_number}: confirmed → cancelled`);
    expect(stdout.indexOf(`order #${order.display_number} (attempt 1)`)).toBeLessThan(stdout.indexOf('→ cancelled'));
    expect(sandbox.deliveries().every((delivery) => delivery.status === 'delivered')).toBe(true);
  } finally {
    child.kill('SIGTERM');
    await sandbox.close();
  }
}, 30_000);
