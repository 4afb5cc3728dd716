// Sessions of a `{ token }` dashboard on the inbox's clock: a fresh random value per sign-in, never
// derived from the token, that expires after sessionHours and ends on sign-out; and the link of
// `signInOnce` (the CLI's printed one) that signs in once.
import { afterAll, describe, expect, it } from 'vitest';
import { createDashboard, type DashboardOptions } from 'integration-sdk/dashboard';
import { ConfigurationError } from 'integration-sdk';
import { manualClock, sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { cookiesOf, csrfOf, TOKEN } from './support.ts';

const HOUR = 3_600_000;
const { clock, manual } = manualClock();
const fixture = sqliteInbox({ clock });
afterAll(() => fixture.dispose());

const dashboardWith = (options: Partial<DashboardOptions> = {}) => createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN }, ...options });
type Dashboard = ReturnType<typeof dashboardWith>;
const visit = (dashboard: Dashboard, path: string, cookie = '') => dashboard.fetch(new Request(`http://dash.test${path}`, { headers: cookie ? { cookie } : {} }));
const sessionCookie = (response: Response) => response.headers.getSetCookie().find((each) => each.startsWith('integration_dashboard_session='));
async function signIn(dashboard: Dashboard): Promise<{ cookie: string; setCookie: string }> {
  const response = await visit(dashboard, `/?token=${TOKEN}`);
  expect(response.status).toBe(303);
  return { cookie: cookiesOf(response), setCookie: sessionCookie(response)! };
}

describe('sessions', () => {
  it('start a fresh random value at each sign-in, never derived from the token, which expires after 12 hours', async () => {
    const dashboard = dashboardWith();
    const [first, second, elsewhere] = [await signIn(dashboard), await signIn(dashboard), await signIn(dashboardWith())];
    expect(new Set([first.cookie, second.cookie, elsewhere.cookie]).size).toBe(3);
    for (const each of [first, second]) {
      expect(each.cookie).not.toContain(TOKEN);
      expect(each.setCookie).toMatch(/Max-Age=43200/);
    }
    // A session of one dashboard is nothing to another with the same token.
    expect((await visit(dashboard, '/', elsewhere.cookie)).status).toBe(401);
    expect((await visit(dashboard, '/', first.cookie)).status).toBe(200);
    manual.advance(12 * HOUR - 1);
    expect((await visit(dashboard, '/', first.cookie)).status).toBe(200);
    manual.advance(1);
    expect((await visit(dashboard, '/', first.cookie)).status).toBe(401);
    expect((await visit(dashboard, '/', second.cookie)).status).toBe(401);
  });

  it('last sessionHours when given, and refuse a sessionHours that is not a number of hours above 0', async () => {
    const dashboard = dashboardWith({ sessionHours: 1 });
    const { cookie, setCookie } = await signIn(dashboard);
    expect(setCookie).toMatch(/Max-Age=3600/);
    manual.advance(HOUR - 1);
    expect((await visit(dashboard, '/', cookie)).status).toBe(200);
    manual.advance(1);
    expect((await visit(dashboard, '/', cookie)).status).toBe(401);
    for (const sessionHours of [0, -1, Number.NaN, Infinity, '12']) expect(() => dashboardWith({ sessionHours: sessionHours as number })).toThrow(ConfigurationError);
  });

  it('end on sign-out: the cookie lets nobody in afterwards, and a cross-site sign-out is refused', async () => {
    const dashboard = dashboardWith();
    let { cookie } = await signIn(dashboard);
    const page = await visit(dashboard, '/', cookie);
    cookie = `${cookie}; ${cookiesOf(page)}`;
    const html = await page.text();
    expect(html).toMatch(/<form method="post" action="\/sign-out" class="sign-out">/);
    const signOut = (headers: Record<string, string>) =>
      dashboard.fetch(
        new Request('http://dash.test/sign-out', { method: 'POST', body: `csrf=${encodeURIComponent(csrfOf(html))}`, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers } }),
      );
    expect((await signOut({ origin: 'http://dash.test', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await visit(dashboard, '/', cookie)).status).toBe(200);
    const out = await signOut({ origin: 'http://dash.test', 'sec-fetch-site': 'same-origin' });
    expect(out.status).toBe(200);
    expect(await out.text()).toContain('Signed out');
    expect(sessionCookie(out)).toMatch(/^integration_dashboard_session=;.*Max-Age=0/);
    expect((await visit(dashboard, '/', cookie)).status).toBe(401);
  });
});

describe('signInOnce (the CLI’s printed link)', () => {
  it('signs in once: a second visit of the link gets a page saying it was used and how to get a new one', async () => {
    const dashboard = dashboardWith({ auth: { token: TOKEN, signInOnce: true } });
    const { cookie } = await signIn(dashboard);
    expect((await visit(dashboard, '/entries', cookie)).status).toBe(200);
    const again = await visit(dashboard, `/entries?token=${TOKEN}`);
    expect(again.status).toBe(401);
    expect(again.headers.getSetCookie().some((each) => each.startsWith('integration_dashboard_session='))).toBe(false);
    const text = await again.text();
    expect(text).toContain('This link was already used');
    expect(text).toMatch(/restart <code>integration-sdk dashboard<\/code>/);
    expect(text).toContain('--token-file');
    // The browser it signed in may open it again (a reload from history): in, without a new session.
    const same = await visit(dashboard, `/entries?token=${TOKEN}`, cookie);
    expect(same.status).toBe(303);
    expect(same.headers.get('location')).toBe('/entries');
    expect(sessionCookie(same)).toBeUndefined();
    // A wrong token still learns nothing, and the token is no bearer for scripts.
    expect(await (await visit(dashboard, '/?token=nope')).text()).not.toContain('already used');
    expect((await dashboard.fetch(new Request('http://dash.test/api/stats', { headers: { authorization: `Bearer ${TOKEN}` } }))).status).toBe(401);
    // Without signInOnce, the link signs in as often as it is opened.
    const reusable = dashboardWith();
    await signIn(reusable);
    await signIn(reusable);
  });
});
