// The dashboard over a Postgres inbox: the same pages and actions as on SQLite, read through the
// Postgres store's queries (counts, buckets, keyset pages, search, the action log).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDashboard, type Dashboard } from 'integration-sdk/dashboard';
import { createInbox, type Inbox } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { deliveryRequest, manualClock, ORDER, orderCreated, SECRET, statusChanged } from '../inbox/support/inbox-fixture.ts';
import { usePostgres } from '../inbox/support/postgres.ts';
import { cookiesOf, csrfOf, formOf, TOKEN, waitFor } from './support.ts';

const postgres = usePostgres();
let inbox: Inbox;
let dashboard: Dashboard;
const ORDER_ID = '22222222-0000-4000-8000-000000000001';

beforeAll(async () => {
  inbox = createInbox({ secret: SECRET, store: postgresStore({ connectionString: postgres.current.url, schema: `dashboard_${process.pid}` }) });
  for (const [payload, id] of [[orderCreated(ORDER_ID), 'a1a1a1a1-0000-4000-8000-000000000001'], [statusChanged(ORDER_ID), 'a1a1a1a1-0000-4000-8000-000000000002']] as const) {
    expect((await inbox.handler(deliveryRequest(payload, { nowMs: Date.now(), deliveryId: id }))).status).toBe(200);
  }
  const worker = inbox.startWorker({ handlers: { 'order.status_changed': async () => Promise.reject(new Error('ERP down')) }, maxAttempts: 1, pollMs: 20 });
  await waitFor(() => inbox.stats(), (stats) => stats.done === 1 && stats.dead === 1);
  await worker.stop();
  dashboard = createDashboard({ inbox, auth: { token: TOKEN } });
}, 120_000);
afterAll(async () => {
  await inbox?.close();
});

const get = (path: string, cookie = '') => dashboard.fetch(new Request(`http://dash.test${path}`, { headers: cookie ? { cookie } : { authorization: `Bearer ${TOKEN}` } }));

it('counts, finds the order by display number, and lists its events', async () => {
  expect(await (await get('/api/stats')).json()).toMatchObject({ received: 2, done: 1, dead: 1, pending: 0 });
  const found = (await (await get('/api/entries?q=%2368341')).json()) as { entries: { id: string; displayNumber: string }[] };
  expect(found.entries.map((entry) => entry.id).sort()).toEqual(['a1a1a1a1-0000-4000-8000-000000000001', 'a1a1a1a1-0000-4000-8000-000000000002']);
  expect(found.entries[0]!.displayNumber).toBe('68341');
  const page = await (await get('/entries/a1a1a1a1-0000-4000-8000-000000000002')).text();
  expect(page).toContain('Error: ERP down');
  expect(page).toContain("The order's other events");
});

it('retries the dead entry from its form and records it in the action log', async () => {
  const signIn = await dashboard.fetch(new Request(`http://dash.test/?token=${TOKEN}`));
  let cookie = cookiesOf(signIn);
  const overview = await get('/', cookie);
  cookie = `${cookie}; ${cookiesOf(overview)}`;
  const csrf = csrfOf(await overview.text());
  // A confirmation that stated another count is asked again, and nothing is retried.
  const stale = await dashboard.fetch(
    new Request('http://dash.test/retry-dead', { method: 'POST', body: `csrf=${encodeURIComponent(csrf)}&expected=5`, headers: { cookie, origin: 'http://dash.test', 'content-type': 'application/x-www-form-urlencoded' } }),
  );
  expect(stale.status).toBe(409);
  expect(await stale.text()).toContain('1 dead now');
  expect((await inbox.stats()).dead).toBe(1);
  const response = await dashboard.fetch(
    new Request('http://dash.test/retry-dead', { method: 'POST', body: `csrf=${encodeURIComponent(csrf)}&expected=1`, headers: { cookie, origin: 'http://dash.test', 'content-type': 'application/x-www-form-urlencoded' } }),
  );
  expect(response.status).toBe(303);
  expect(response.headers.get('location')).toBe('/?done=retry-dead&n=1');
  expect((await inbox.stats()).pending).toBe(1);
  expect(await (await get('/', cookie)).text()).toContain('1 dead entry back to pending (the confirmation page stated 1)');
});

it('purges dead entries only after the page that states them, with that count back, and keeps the charts\' counts', async () => {
  const { clock, manual } = manualClock();
  const purging = createInbox({ secret: SECRET, clock, invalidPayload: 'dead', store: postgresStore({ connectionString: postgres.current.url, schema: `dashboard_purge_${process.pid}` }) });
  try {
    // Stored dead at once (a body the schema refuses), two days before the purge.
    const data = { ...ORDER, order_id: '22222222-0000-4000-8000-000000000009', display_number: '7001', totals: 'not an object' };
    expect((await purging.handler(deliveryRequest({ event: 'order.created', data }, { nowMs: manual.now() }))).status).toBe(200);
    manual.advance(2 * 86_400_000);
    const purgeDashboard = createDashboard({ inbox: purging, auth: { token: TOKEN } });
    let cookie = cookiesOf(await purgeDashboard.fetch(new Request(`http://dash.test/?token=${TOKEN}`)));
    const get = async (path: string) => {
      const response = await purgeDashboard.fetch(new Request(`http://dash.test${path}`, { headers: { cookie } }));
      cookie = [cookie, cookiesOf(response)].filter(Boolean).join('; ');
      return response;
    };
    // Counted afresh by a new dashboard each time: a dashboard's reader keeps the hours it counted.
    const activity = async () =>
      ((await (await createDashboard({ inbox: purging, auth: { token: TOKEN } }).fetch(new Request('http://dash.test/api/stats', { headers: { authorization: `Bearer ${TOKEN}` } }))).json()) as { activity: unknown }).activity;
    const page = await (await get('/purge?days=1')).text();
    expect(page).toMatch(/<strong>1 dead entry<\/strong>[\s\S]*Orders: #7001/);
    const form = formOf(page, '/purge');
    const post = (body: URLSearchParams) =>
      purgeDashboard.fetch(new Request('http://dash.test/purge', { method: 'POST', body: body.toString(), headers: { cookie, origin: 'http://dash.test', 'content-type': 'application/x-www-form-urlencoded' } }));
    expect((await post(new URLSearchParams({ ...Object.fromEntries(form), expected: '2' }))).status).toBe(409);
    expect((await purging.stats()).dead).toBe(1);
    const before = await activity();
    expect((await post(form)).status).toBe(303);
    expect((await purging.stats()).dead).toBe(0);
    expect(await activity()).toEqual(before);
  } finally {
    await purging.close();
  }
});
