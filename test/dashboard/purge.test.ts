// Purging dead entries over plain HTTP, on a real SQLite inbox and the inbox's clock: never at once.
// A page states how many entries and which orders it deletes (N ≥ 1 days), the POST needs that
// count back and deletes nothing on a mismatch, the time the page counted from is the one the purge
// uses, and the charts keep counting what was received and died.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDashboard } from 'integration-sdk/dashboard';
import { deliveryRequest, manualClock, ORDER, sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { cookiesOf, formOf, TOKEN } from './support.ts';

const HOUR = 3_600_000;
const { clock, manual } = manualClock();
// A body the schema refuses is stored dead at once, its finishing time the inbox's clock.
const fixture = sqliteInbox({ clock, invalidPayload: 'dead' });
afterAll(() => fixture.dispose());
const dashboard = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN } });

let n = 0;
async function dies(displayNumber: string): Promise<void> {
  n += 1;
  const data = { ...ORDER, order_id: `44444444-0000-4000-8000-${String(n).padStart(12, '0')}`, display_number: displayNumber, totals: 'not an object' };
  expect((await fixture.inbox.handler(deliveryRequest({ event: 'order.created', data }, { nowMs: manual.now() }))).status).toBe(200);
}

let cookie = '';
const get = async (path: string) => {
  const response = await dashboard.fetch(new Request(`http://dash.test${path}`, { headers: { cookie } }));
  const set = cookiesOf(response);
  if (set) cookie = `${cookie}; ${set}`;
  return response;
};
const post = (body: URLSearchParams) =>
  dashboard.fetch(new Request('http://dash.test/purge', { method: 'POST', body: body.toString(), headers: { cookie, origin: 'http://dash.test', 'content-type': 'application/x-www-form-urlencoded' } }));
// Counted afresh by a new dashboard each time: the first one's reader keeps the hours it counted.
const activity = async () => {
  const fresh = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN } });
  return ((await (await fresh.fetch(new Request('http://dash.test/api/stats', { headers: { authorization: `Bearer ${TOKEN}` } }))).json()) as { activity: unknown }).activity;
};

beforeAll(async () => {
  await dies('5001');
  await dies('5002');
  manual.advance(2 * HOUR);
  await dies('5003');
  // A day and an hour after the first two died: they are older than a day, the third is not.
  manual.advance(24 * HOUR - HOUR);
  cookie = cookiesOf(await dashboard.fetch(new Request(`http://dash.test/?token=${TOKEN}`)));
});

it('refuses 0, fractions and anything but a whole number of days, and deletes nothing', async () => {
  for (const days of ['0', '1.5', '-1', 'abc', '']) {
    const response = await get(`/purge?days=${days}`);
    expect(response.status, days).toBe(400);
    expect(await response.text()).toMatch(/1 day or more|1 or more/);
  }
  expect((await fixture.inbox.stats()).dead).toBe(3);
});

it('states how many entries and which orders it deletes, needs that count back, and purges from the time the page counted from', async () => {
  const page = await get('/purge?days=1');
  expect(page.status).toBe(200);
  const text = await page.text();
  expect(text).toMatch(/<strong>2 dead entries<\/strong> finished more than 1 day ago/);
  expect(text).toMatch(/Orders: #5001, #5002</);
  expect(text).not.toContain('#5003');
  const form = formOf(text, '/purge');
  expect(form.get('expected')).toBe('2');

  // The third entry is older than a day too now, but the page counted from an earlier time.
  manual.advance(2 * HOUR);
  for (const tampered of [new URLSearchParams({ ...Object.fromEntries(form), expected: '1' }), new URLSearchParams({ ...Object.fromEntries(form), expected: '3' })]) {
    const refused = await post(tampered);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(new RegExp(`Nothing was deleted: the confirmation page stated ${tampered.get('expected')}, and 2 dead entries are that old now`));
  }
  const unstated = new URLSearchParams(form);
  unstated.delete('expected');
  expect((await post(unstated)).status).toBe(409);
  const zero = await post(new URLSearchParams({ ...Object.fromEntries(form), days: '0' }));
  expect(zero.status).toBe(400);
  expect(await zero.text()).toContain('Nothing was deleted');
  expect((await fixture.inbox.stats()).dead).toBe(3);

  const before = await activity();
  const done = await post(form);
  expect(done.status).toBe(303);
  expect(done.headers.get('location')).toBe('/?done=purged&n=2');
  const held = [];
  for await (const entry of fixture.inbox.entries({ status: 'dead' })) held.push(entry.displayNumber ?? entry.id);
  expect(held).toHaveLength(1);
  expect(await fixture.inbox.stats()).toMatchObject({ received: 1, dead: 1 });
  // Purging does not rewrite history: received and dead per hour and per day are as they were.
  expect(await activity()).toEqual(before);
  const overview = await (await get(done.headers.get('location')!)).text();
  expect(overview).toContain('2 dead entries were deleted.');
  expect(overview).toMatch(/2 dead entries older than 1 day \(finished before [^)]+\) deleted; the confirmation page stated 2; orders #5001, #5002/);
});
