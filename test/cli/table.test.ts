// Tables fit the terminal's width: optional columns go first, then text is cut with an ellipsis,
// never wrapped; `inbox dead` shows the order's display number. The helper runs in process; `inbox
// dead` runs as the CLI on a real SQLite inbox, `webhooks list` against the sandbox.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sqliteStore } from '../../src/inbox/sqlite/index.ts';
import { table, type Column } from '../../src/cli/table.ts';
import { api } from '../sandbox/helpers.ts';
import { runCli, startProxiedSandbox } from './helpers.ts';

interface Row {
  id: string;
  kind: string;
  error: string;
  count: number;
  at: string;
}

const COLUMNS: Column<Row>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'kind', value: (r) => r.kind, optional: 2 },
  { header: 'count', value: (r) => String(r.count), optional: 0 },
  { header: 'error', value: (r) => r.error, kind: 'text', min: 20 },
  { header: 'at', value: (r) => r.at, optional: 1 },
];

const ROWS: Row[] = [
  { id: '0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50', kind: 'order.status_changed', error: 'TypeError: Cannot read properties of undefined (reading "sku") at handler (erp.ts:42)', count: 5, at: '2026-11-26T09:41:07.000Z' },
  { id: 'a1', kind: 'order.created', error: 'ERP down', count: 12, at: '2026-11-26T09:42:00.000Z' },
];

describe('table', () => {
  test('without a width (piped): every column, every value whole', () => {
    const lines = table(ROWS, COLUMNS).split('\n');
    expect(lines[0]).toMatch(/^id\s+kind\s+count\s+error\s+at$/);
    expect(lines[1]).toContain(ROWS[0]!.error);
    expect(lines[1]).toContain(ROWS[0]!.at);
  });

  test('narrower: optional columns go, lowest first, before text is cut below its minimum; then text is cut with an ellipsis', () => {
    const at = (width: number) => table(ROWS, COLUMNS, width).split('\n');
    for (const width of [120, 100, 80, 60]) {
      const lines = at(width);
      for (const line of lines) expect(line.length, `${width}: ${line}`).toBeLessThanOrEqual(width);
      expect(lines[1]!.startsWith(`${ROWS[0]!.id}  `), `${width}`).toBe(true); // the id is never cut while anything else can give way
    }
    expect(at(120)[0]).toMatch(/^id\s+kind\s+count\s+error\s+at$/); // the error cut, to 27 characters
    expect(at(120)[1]).toContain('  TypeError: Cannot read pro…  2026-11-26T09:41:07.000Z');
    expect(at(100)[0]).toMatch(/^id\s+kind\s+error$/); // count went first, then at
    expect(at(80)[0]).toMatch(/^id\s+kind\s+error$/); // the error at its minimum, 20
    expect(at(80)[1]).toBe('0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50  order.status_changed  TypeError: Cannot r…');
    expect(at(60)[0]).toMatch(/^id\s+error$/); // rather than cut the error below its minimum
    expect(at(60)[1]).toBe('0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50  TypeError: Cannot rea…');
    expect(at(60)[2]).toMatch(/^a1 +ERP down$/);
  });

  test('so narrow that nothing optional is left: the text, then the id, is cut', () => {
    const lines = table(ROWS, COLUMNS, 40).split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(40);
    expect(lines[1]).toBe('0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4…  Typ…'); // the error at 4 characters, the id given the rest
  });

  test('no rows: (none)', () => {
    expect(table([], COLUMNS, 80)).toBe('(none)');
  });
});

describe('inbox dead', () => {
  let dir: string;
  let db: string;
  const ORDER = '0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50';
  const ERROR = 'ERP refused the order: customer 4711 has no billing address on file, and the fallback address lookup timed out after 30 s';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-table-'));
    db = join(dir, 'inbox.db');
    const store = sqliteStore({ path: db });
    await store.migrate();
    const now = Date.now();
    const payload = JSON.stringify({ event: 'order.status_changed', delivery_id: 'c1f0a9e2-7d4b-4e21-9a55-1b2c3d4e5f60', ts: 1, data: { order_id: ORDER, display_number: '1002', status: 'dispatched', customer: { phone: '11912345678' } } });
    await store.insert({ deliveryId: 'c1f0a9e2-7d4b-4e21-9a55-1b2c3d4e5f60', event: 'order.status_changed', orderId: ORDER, ts: 1, payload, known: true, receivedAt: now });
    const [claimed] = await store.claim({ now, workerId: 'w', leaseMs: 60_000, limit: 1, orderWaitMs: 0 });
    await store.fail(claimed!.id, { workerId: 'w', error: ERROR, now, nextAttemptAt: null });
    await store.close();
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test("fits an 80-column terminal: the delivery id whole, the order's display number, the error cut with an ellipsis", async () => {
    const result = await runCli(['inbox', 'dead', '--store', db], { env: { COLUMNS: '80' } });
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2); // a header and the entry: nothing wrapped
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^delivery_id\s+order\s+last_error$/);
    expect(lines[1]).toBe('c1f0a9e2-7d4b-4e21-9a55-1b2c3d4e5f60  #1002  ERP refused the order: customer 47…');
    expect(result.stdout).not.toContain('11912345678');
  });

  test('piped with no COLUMNS: every column whole, the display number among them', async () => {
    const result = await runCli(['inbox', 'dead', '--store', db]);
    const [header, row] = result.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^delivery_id\s+event\s+order\s+order_id\s+attempts\s+last_error\s+received_at$/);
    expect(row).toContain(`order.status_changed  #1002  ${ORDER}  1         ${ERROR}  `);
    const json = await runCli(['inbox', 'dead', '--store', db, '--json']);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ deliveryId: 'c1f0a9e2-7d4b-4e21-9a55-1b2c3d4e5f60', displayNumber: '1002', orderId: ORDER })]);
  });
});

test('webhooks list fits an 80-column terminal: the endpoint id whole, its URL cut; at 100 its consecutive failures too', async () => {
  const service = await startProxiedSandbox();
  try {
    const url = 'http://127.0.0.1:3000/integration/webhooks/receiver-with-a-long-path?token=abc';
    const created = await api(service.sandbox)('POST', '/webhooks', { url, events: ['order.created', 'order.status_changed'] });
    const { id } = created.body as { id: string };
    const env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
    const narrow = await runCli(['webhooks', 'list'], { env: { ...env, COLUMNS: '80' } });
    const lines = narrow.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^id\s+url$/);
    expect(lines[1]).toBe(`${id}  ${url.slice(0, 41)}…`); // 80 columns to the last
    const wider = await runCli(['webhooks', 'list'], { env: { ...env, COLUMNS: '100' } });
    expect(wider.stdout.trimEnd().split('\n')[1]).toBe(`${id}  ${url.slice(0, 39)}…  0`);
    const piped = await runCli(['webhooks', 'list'], { env });
    expect(piped.stdout).toContain(`${url}  order.created,order.status_changed  0`);
  } finally {
    await service.close();
  }
});
