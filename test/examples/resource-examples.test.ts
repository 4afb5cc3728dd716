// Every resource example is a script a user runs: run each one as a real Node process against the
// sandbox and check it exits 0 having printed what it promises.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { freePort } from '../../bench/lib/free-port.ts';
import { sourceArgs, startProcess } from '../support/processes.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
let sandbox: Sandbox;
let workDir: string;

beforeAll(async () => {
  sandbox = await createSandbox();
  workDir = mkdtempSync(join(tmpdir(), 'sdk-examples-'));
});

afterAll(async () => {
  await sandbox.close();
  rmSync(workDir, { recursive: true, force: true });
});

const client = () => new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, rateLimit: false });

async function example(name: string, args: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', join(root, 'test/support/register-src.mjs'), join(root, 'examples', name), ...args], {
    cwd: workDir,
    env: { ...process.env, INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url, NODE_NO_WARNINGS: '1', ...env },
    timeout: 20_000,
  });
  return stdout;
}

describe('resource examples run against the sandbox', () => {
  it('health.ts', async () => {
    expect(await example('health.ts')).toContain('status ok');
  });

  it('catalog.ts, then stock.ts on what it wrote', async () => {
    const store = { INTEGRATION_STORE_ID: sandbox.storeIds[0]! };
    const catalog = await example('catalog.ts', [], store);
    expect(catalog).toContain('1200 created, 0 updated, 0 errors in 3 batches');
    const stock = await example('stock.ts', [], store);
    expect(stock).toContain('2 updated, 3 errors');
    expect(stock).toMatch(/#4 NOT-IN-CATALOG: error PRODUCT_NOT_FOUND/);
  });

  it('stock.ts with the key of the sandbox’s export line (every store, none named): says what it needs in one line, exit 2, no stack trace', async () => {
    const failed = await example('stock.ts', [], { INTEGRATION_API_KEY: sandbox.keys.full }).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stdout).toBe('');
    expect(failed?.stderr?.trim().split('\n')).toEqual([
      'stock.ts sets the stock of one store, and this key may write every store of the merchant: set INTEGRATION_STORE_ID to one of them (the sandbox lists its stores under "Stores:"), e.g. INTEGRATION_STORE_ID=<store id> node examples/stock.ts',
    ]);
  });

  it('sync.ts sends everything once, then only what changed, then deactivates what left the export', async () => {
    const state = join(workDir, 'example-state.db');
    const store = { INTEGRATION_STORE_ID: sandbox.storeIds[0]! };
    expect(await example('sync.ts', ['--state', state], store)).toMatch(/2000 items, 0 unchanged, 2000 sent \(2000 created, 0 updated\), 0 errors, 0 missing/);
    expect(await example('sync.ts', ['--state', state], store)).toMatch(/2000 items, 2000 unchanged, 0 sent/);
    const edited = await example('sync.ts', ['--state', state, '--edit', '3', '--drop', '2', '--deactivate-missing'], store);
    expect(edited).toMatch(/1998 items, 1995 unchanged, 3 sent \(0 created, 3 updated\), 0 errors, 2 missing/);
    expect(edited).toContain('deactivated 2 missing products (0 errors, 0 sent without stores)');
    expect(sandbox.getProduct('SYNC-DEMO-00001')?.stores[sandbox.storeIds[0]!]?.active).toBe(false);
  });

  it('orders.ts finds an order by id and by external id', async () => {
    const order = await sandbox.createOrder({ external_order_id: 'MKT-EXAMPLE-1', source_channel: 'marketplace' });
    const out = await example('orders.ts', [order.order_id, 'MKT-EXAMPLE-1']);
    expect(out).toContain(`#${order.display_number}`);
    expect(out).toContain(`MKT-EXAMPLE-1 is order ${order.order_id}`);
  });

  it('webhook-endpoints.ts registers, stores the secret, reads the log and deletes the endpoint it made, run after run', async () => {
    const url = 'https://erp.example.com/hooks';
    for (let run = 1; run <= 6; run += 1) {
      const out = await example('webhook-endpoints.ts', [url]);
      expect(out).toMatch(/registered [0-9a-f-]{36}/);
      expect(out).toMatch(/deleted [0-9a-f-]{36}/);
      expect(readFileSync(join(workDir, '.webhook-secret'), 'utf8')).toMatch(/^whsec_/);
    }
    expect((await client().webhooks.list()).filter((endpoint) => endpoint.url === url)).toEqual([]);
  }, 60_000);

  it('webhook-endpoints.ts --keep, five runs: one endpoint, whose stored secret every receiver example verifies deliveries with', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/webhooks`;
    for (let run = 1; run <= 5; run += 1) {
      expect(await example('webhook-endpoints.ts', [url, '--keep'])).toMatch(run === 1 ? /registered/ : /using [0-9a-f-]{36}, registered for/);
    }
    const [endpoint, ...more] = (await client().webhooks.list()).filter((registered) => registered.url === url);
    expect(more).toEqual([]);
    const secret = readFileSync(join(workDir, '.webhook-secret'), 'utf8');
    for (const receiver of ['express', 'fastify', 'hono', 'nextjs-route', 'node-http']) {
      // As its header says: WEBHOOK_SECRET=$(cat .webhook-secret) PORT=... node examples/webhooks/<receiver>.ts
      const server = startProcess(process.execPath, sourceArgs(join(root, 'examples', 'webhooks', `${receiver}.ts`)), {
        env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port), NODE_NO_WARNINGS: '1' },
      });
      try {
        await server.waitFor(/listening on/);
        const { delivery_id } = await client().webhooks.test(endpoint!.id);
        await server.waitFor(new RegExp(`received webhook\\.test ${delivery_id}`));
      } finally {
        await server.stop();
      }
    }
  }, 90_000);

  it('orders.ts without an argument says what it needs, exit 2', async () => {
    const failed = await example('orders.ts').then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(/^usage: node examples\/orders\.ts <order_id>/);
    expect(failed?.stderr).toContain('sandbox order create');
  });

  it('loyalty.ts reads a balance, credits idempotently and redeems a coupon', async () => {
    const phone = sandbox.seed.customers[0]!.phone;
    const out = await example('loyalty.ts', [phone, sandbox.storeIds[0]!]);
    expect(out).toMatch(/balance: \d+ points/);
    expect(out).toMatch(/redeemed WELCOME10/i);
  });
});
