// Every resource example is a script a user runs: run each one as a real Node process against the
// sandbox and check it exits 0 having printed what it promises.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';

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

  it('webhook-endpoints.ts registers, stores the secret and reads the log', async () => {
    const out = await example('webhook-endpoints.ts', ['https://erp.example.com/hooks']);
    expect(out).toMatch(/registered [0-9a-f-]{36}/);
    expect(readFileSync(join(workDir, '.webhook-secret'), 'utf8')).toMatch(/^whsec_/);
  });

  it('loyalty.ts reads a balance, credits idempotently and redeems a coupon', async () => {
    const phone = sandbox.seed.customers[0]!.phone;
    const out = await example('loyalty.ts', [phone, sandbox.storeIds[0]!]);
    expect(out).toMatch(/balance: \d+ points/);
    expect(out).toMatch(/redeemed WELCOME10/i);
  });
});
