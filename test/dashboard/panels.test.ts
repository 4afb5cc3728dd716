// The Service and Sync panels against the sandbox over its socket: a delivery the service delivered
// after a failed attempt shows no error, while one still failing shows its own; a sync run with
// rejected items does not look like a clean one, and a failed run looks like neither.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createDashboard, type Dashboard } from 'integration-sdk/dashboard';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { createSync, type Sync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { api, startReceiver } from '../sandbox/helpers.ts';
import { sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { TOKEN } from './support.ts';

const dir = tempDir('dashboard-panels');
const fixture = sqliteInbox();
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let client: IntegrationClient;
let sync: Sync;
let dashboard: Dashboard;

beforeAll(async () => {
  // A fast retry schedule: the second attempt follows the first within milliseconds.
  sandbox = await createSandbox({ rate: false, timeScale: 0.00002 });
  receiver = await startReceiver((n) => (n === 1 ? 500 : 200));
  await api(sandbox)('POST', '/webhooks', { url: receiver.url, events: ['order.created'] });
  const closed = await startReceiver();
  await closed.close();
  await api(sandbox)('POST', '/webhooks', { url: closed.url, events: ['order.created'] });
  sandbox.createOrder();
  await sandbox.idle();
  client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  // A key limited to one store: an item for another store is rejected.
  const limited = new IntegrationClient({ apiKey: sandbox.keys.oneStore, baseUrl: sandbox.url });
  sync = createSync({ client: limited, state: sqliteSyncState({ path: `${dir.path}/state.db` }) });
  dashboard = createDashboard({ inbox: fixture.inbox, client, sync, auth: { token: TOKEN } });
}, 60_000);
afterAll(async () => {
  await sync?.close();
  await receiver?.close();
  await sandbox?.close();
  await fixture.dispose();
  dir.remove();
});

const page = async (path: string) => (await dashboard.fetch(new Request(`http://dash.test${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }))).text();
const rowOf = (html: string, text: string) => /<tr[^>]*>(?:(?!<\/tr>)[\s\S])*<\/tr>/g[Symbol.match](html)?.find((row) => row.includes(text)) ?? '';

it('shows no error for a delivery that was delivered after a failed attempt, and its own for one still failing', async () => {
  const endpoints = await client.webhooks.list();
  const [delivered, failing] = await Promise.all(endpoints.map(async (endpoint) => (await client.webhooks.deliveries(endpoint.id))[0]!));
  const [ok, bad] = delivered!.status === 'delivered' ? [delivered!, failing!] : [failing!, delivered!];
  // The service keeps the first attempt's error on the delivered record: the page must not show it.
  expect(ok).toMatchObject({ status: 'delivered', attempt_count: 2 });
  expect(ok.last_error).toBeTruthy();
  expect(bad.last_error).toBeTruthy();
  const html = await page('/service');
  const okRow = rowOf(html, ok.id);
  expect(okRow).toContain('delivered');
  expect(okRow).toMatch(/<td class="error-text"><\/td>/);
  expect(html).not.toContain(ok.last_error!);
  expect(rowOf(html, bad.id)).toContain(`<td class="error-text">${bad.last_error}</td>`);
});

it('marks a sync run with rejected items apart from a clean run, with its error count, and a failed run apart from both', async () => {
  const [allowed, other] = sandbox.storeIds;
  const clean = await sync.catalog([{ external_id: 'OK-1', name: 'ok', price: 1, stores: [{ store_id: allowed!, stock_quantity: 1 }] }]);
  expect(clean.errors).toBe(0);
  const rejected = await sync.catalog([{ external_id: 'FORBIDDEN', name: 'f', price: 1, stores: [{ store_id: other!, stock_quantity: 1 }] }]);
  expect(rejected.errors).toBe(1);
  const failed = await sync.catalog(
    (async function* () {
      yield { external_id: 'OK-2', name: 'ok', price: 1 };
      throw new Error('the ERP export broke');
    })(),
  ).catch((error: unknown) => error);
  expect(failed).toBeInstanceOf(Error);
  const runs: { runId: string; errors: number; outcome: string }[] = [];
  for await (const run of sync.runs({ limit: 3 })) runs.push(run);
  const html = await page('/sync');
  const [failedRow, rejectedRow, cleanRow] = runs.map((run) => rowOf(html, run.runId));
  expect(cleanRow).toMatch(/<tr class="run-row-ok">/);
  expect(cleanRow).toContain('<span class="run-ok">completed</span>');
  expect(rejectedRow).toMatch(/<tr class="run-row-warn">/);
  expect(rejectedRow).toContain('<span class="run-warn">completed with 1 error</span>');
  expect(failedRow).toMatch(/<tr class="run-row-failed">/);
  expect(failedRow).toMatch(/<span class="run-failed">failed/);
});
