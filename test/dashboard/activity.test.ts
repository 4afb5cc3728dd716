// The overview's hourly buckets on the inbox's clock: hours already over are counted once and then
// only the hour under way (and hours that ended since) are counted again; the dashboard's own
// actions make it count the week again.
import { afterAll, expect, it } from 'vitest';
import { createDashboard } from 'integration-sdk/dashboard';
import { deliveryRequest, manualClock, orderCreated, sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { TOKEN } from './support.ts';

const HOUR = 3_600_000;
const { clock, manual } = manualClock();
const fixture = sqliteInbox({ clock });
afterAll(() => fixture.dispose());

interface Stats {
  received: number;
  activity: { hourly: { start: number; received: number }[]; daily: { received: number }[] };
}

let n = 0;
async function receive(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    n += 1;
    const response = await fixture.inbox.handler(deliveryRequest(orderCreated(`33333333-0000-4000-8000-${String(n).padStart(12, '0')}`), { nowMs: manual.now() }));
    expect(response.status).toBe(200);
  }
}

it('counts each hour once it is over, the hour under way at each read, and hours that ended since', async () => {
  manual.advance(Date.UTC(2026, 10, 20, 10, 30) - manual.now());
  await receive(2);
  const dashboard = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN } });
  const stats = async () => (await (await dashboard.fetch(new Request('http://dash.test/api/stats', { headers: { authorization: `Bearer ${TOKEN}` } }))).json()) as Stats;
  const hour = (body: Stats, at: number) => body.activity.hourly.find((bucket) => bucket.start === Math.floor(at / HOUR) * HOUR)?.received;

  const first = await stats();
  const tenOClock = manual.now();
  expect(hour(first, tenOClock)).toBe(2);
  await receive(1);
  expect(hour(await stats(), tenOClock)).toBe(3);
  manual.advance(2 * HOUR);
  await receive(4);
  const later = await stats();
  expect(hour(later, tenOClock)).toBe(3);
  expect(hour(later, manual.now())).toBe(4);
  expect(later.activity.hourly.reduce((sum, bucket) => sum + bucket.received, 0)).toBe(7);
  expect(later.activity.daily.reduce((sum, bucket) => sum + bucket.received, 0)).toBe(7);
  expect(later.received).toBe(7);
});
