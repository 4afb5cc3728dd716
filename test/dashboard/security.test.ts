// The security rules of dashboard.md over plain HTTP, against a real SQLite inbox: closed without
// auth, no hint on a wrong secret, the token leaves the address at once, CSRF and same-origin
// checks on every action, read-only refuses, every field escaped, the headers on every answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboard } from 'integration-sdk/dashboard';
import { ConfigurationError } from 'integration-sdk';
import type { WebhookPayload } from 'integration-sdk/webhooks';
import { deliveryRequest, sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { cookiesOf, csrfOf, listen, TOKEN, waitFor } from './support.ts';

const HOSTILE = '<script>alert("x")</script>';
const hostileEvent = `stock.<img src=x onerror=alert(1)>`;
const HOSTILE_PAYLOAD: WebhookPayload = {
  event: hostileEvent,
  data: {
    order_id: `order-${HOSTILE}`,
    display_number: `<b>42</b>${HOSTILE}`,
    external_order_id: `"><svg onload=alert(2)>`,
    customer: { name: `<i>${HOSTILE}</i>`, phone: '11912345678', email: 'ana@example.com' },
  },
};

const fixture = sqliteInbox();
const { inbox } = fixture;
let server: Awaited<ReturnType<typeof listen>>;
let hostileId: string;
let closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  hostileId = `dlv-${HOSTILE}`;
  const response = await inbox.handler(deliveryRequest(HOSTILE_PAYLOAD, { nowMs: Date.now(), deliveryId: hostileId }));
  expect(response.status).toBe(200);
  const worker = inbox.startWorker({
    handlers: { [hostileEvent]: async () => Promise.reject(new Error(`ERP said ${HOSTILE}`)) },
    maxAttempts: 1,
    pollMs: 20,
  });
  await waitFor(() => inbox.stats(), (stats) => stats.dead === 1);
  await worker.stop();
  server = await listen(createDashboard({ inbox, auth: { token: TOKEN }, basePath: '/ops' }).node);
});
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  await server?.close();
  await fixture.dispose();
});

const get = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, { redirect: 'manual', ...init });

async function signIn(): Promise<string> {
  const response = await get(`/ops/?token=${TOKEN}`);
  expect(response.status).toBe(303);
  return cookiesOf(response);
}

function expectSafeHeaders(response: Response): void {
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('cache-control')).toBe('no-store');
}

describe('createDashboard', () => {
  it('throws ConfigurationError without auth, with an empty token, or without an inbox from createInbox', () => {
    expect(() => createDashboard({ inbox } as never)).toThrow(ConfigurationError);
    expect(() => createDashboard({ inbox, auth: { token: '' } })).toThrow(ConfigurationError);
    expect(() => createDashboard({ inbox: {} as never, auth: { token: TOKEN } })).toThrow(ConfigurationError);
    expect(() => createDashboard({ inbox, auth: { token: TOKEN }, basePath: 'no-slash' })).toThrow(ConfigurationError);
    // Two ways in at once would leave one silently unused.
    expect(() => createDashboard({ inbox, auth: { token: TOKEN, basic: { username: 'ops', password: 'pw' } } as never })).toThrow(/not token and basic/);
  });
});

describe('signing in', () => {
  it('answers 401 to every page, API route and action without a token, with the security headers', async () => {
    for (const path of ['/ops', '/ops/', '/ops/entries', `/ops/entries/${encodeURIComponent(hostileId)}`, '/ops/api/stats', '/ops/api/entries', '/ops/retry-dead']) {
      const response = await get(path);
      expect(response.status, path).toBe(401);
      expectSafeHeaders(response);
      expect(await response.text()).not.toContain('order-');
    }
    const post = await get('/ops/purge', { method: 'POST', body: 'days=0', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(post.status).toBe(401);
  });

  it('answers a wrong token exactly as no token, in the address or as a bearer', async () => {
    const none = await get('/ops/');
    const wrong = await get('/ops/?token=nope');
    const almost = await get(`/ops/?token=${TOKEN.slice(0, -1)}x`);
    const bearer = await get('/ops/api/stats', { headers: { authorization: 'Bearer nope' } });
    expect([wrong.status, almost.status, bearer.status]).toEqual([401, 401, 401]);
    const text = await none.text();
    expect(await wrong.text()).toBe(text);
    expect(await almost.text()).toBe(text);
    expect(wrong.headers.get('set-cookie')).toBe(null);
  });

  it('turns the first visit with ?token= into an HttpOnly SameSite=Strict cookie and a redirect without the token', async () => {
    const response = await get(`/ops/entries?status=dead&token=${TOKEN}`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/ops/entries?status=dead');
    const cookie = response.headers.getSetCookie().find((each) => each.startsWith('integration_dashboard_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).not.toContain(TOKEN);
    const page = await get('/ops/entries?status=dead', { headers: { cookie: cookiesOf(response) } });
    expect(page.status).toBe(200);
    expectSafeHeaders(page);
    expect(await page.text()).not.toContain(TOKEN);
    const secure = await get(`/ops/?token=${TOKEN}`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(secure.headers.getSetCookie().find((each) => each.startsWith('integration_dashboard_session='))).toMatch(/; Secure/);
  });

  it('lets scripts in with Authorization: Bearer on the JSON routes', async () => {
    const response = await get('/ops/api/stats', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expectSafeHeaders(response);
    expect(await response.json()).toMatchObject({ received: 1, dead: 1 });
    const entries = (await (await get('/ops/api/entries?status=dead', { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { entries: { id: string }[]; next: unknown };
    expect(entries.entries.map((entry) => entry.id)).toEqual([hostileId]);
    expect(entries.next).toBeNull();
    expect(JSON.stringify(entries)).not.toContain('11912345678');
  });

  it('with basic auth, answers a wrong user name and a wrong password alike, with a challenge', async () => {
    const basic = await listen(createDashboard({ inbox, auth: { basic: { username: 'ops', password: 'correct horse' } } }).node);
    closers.push(basic.close);
    const as = (user: string, pass: string) => fetch(`${basic.url}/`, { headers: { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` } });
    const [wrongUser, wrongPass, right] = await Promise.all([as('root', 'correct horse'), as('ops', 'battery'), as('ops', 'correct horse')]);
    expect([wrongUser.status, wrongPass.status, right.status]).toEqual([401, 401, 200]);
    expect(await wrongUser.text()).toBe(await wrongPass.text());
    expect(wrongUser.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
  });

  it('with authorize, asks for each action: a viewer may look but not act', async () => {
    const asked: string[] = [];
    const viewer = createDashboard({ inbox, auth: { authorize: (_request, action) => (asked.push(action), action === 'view') } });
    expect((await viewer.fetch(new Request('http://dash.test/'))).status).toBe(200);
    const entry = `http://dash.test/entries/${encodeURIComponent(hostileId)}`;
    const page = await (await viewer.fetch(new Request(entry))).text();
    const response = await viewer.fetch(
      new Request(`${entry}/retry`, { method: 'POST', body: `csrf=${csrfOf(page)}`, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://dash.test' } }),
    );
    expect(response.status).toBe(403);
    expect(asked).toContain('retry');
    expect((await inbox.entry(hostileId))?.status).toBe('dead');
    // The confirmation pages of retry-dead and purge are asked for as those actions.
    expect((await viewer.fetch(new Request('http://dash.test/purge?days=1'))).status).toBe(403);
    expect((await viewer.fetch(new Request('http://dash.test/retry-dead'))).status).toBe(403);
    expect(asked).toEqual(expect.arrayContaining(['purge', 'retry-dead']));
    const nobody = createDashboard({ inbox, auth: { authorize: () => false } });
    expect((await nobody.fetch(new Request('http://dash.test/'))).status).toBe(401);
  });
});

describe('the sign-in page', () => {
  const signInPageOf = async (dashboard: ReturnType<typeof createDashboard>) => {
    const response = await dashboard.fetch(new Request('http://dash.test/ops/entries'));
    expect(response.status).toBe(401);
    return response.text();
  };

  it('is styled like the other pages and names only the way in that is configured', async () => {
    const token = await signInPageOf(createDashboard({ inbox, auth: { token: TOKEN }, basePath: '/ops' }));
    const basic = await signInPageOf(createDashboard({ inbox, auth: { basic: { username: 'ops', password: 'pw' } }, basePath: '/ops' }));
    const authorize = await signInPageOf(createDashboard({ inbox, auth: { authorize: () => false }, basePath: '/ops' }));
    for (const page of [token, basic, authorize]) {
      expect(page).toContain('<link rel="stylesheet" href="/ops/assets/dashboard.css">');
      expect(page).toContain('<header class="top">');
      expect(page).toMatch(/<h1>Sign-in required<\/h1>/);
    }
    const words = (page: string) => /<main id="main">([\s\S]*)<\/main>/.exec(page)![1]!;
    expect(words(token)).toContain('?token=');
    expect(words(token)).not.toMatch(/password|user name/i);
    expect(words(basic)).toMatch(/user name and password/);
    expect(words(basic)).not.toMatch(/token|link/i);
    expect(words(authorize)).toMatch(/sign-in of the application that serves it/);
    expect(words(authorize)).not.toMatch(/password|token|link/i);
  });
});

describe('actions', () => {
  async function overview(cookie: string): Promise<{ cookie: string; csrf: string }> {
    const response = await get('/ops/', { headers: { cookie } });
    const all = [cookie, cookiesOf(response)].filter(Boolean).join('; ');
    return { cookie: all, csrf: csrfOf(await response.text()) };
  }
  const purge = (cookie: string, body: string, headers: Record<string, string> = {}) =>
    get('/ops/purge', { method: 'POST', body, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: server.url, ...headers } });

  it('refuses a forged or missing CSRF token, and a cross-origin POST, and changes nothing', async () => {
    const { cookie, csrf } = await overview(await signIn());
    expect((await purge(cookie, 'days=0&csrf=forged')).status).toBe(403);
    expect((await purge(cookie, 'days=0')).status).toBe(403);
    expect((await purge(cookie, `days=0&csrf=${csrf}`, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await purge(cookie, `days=0&csrf=${csrf}`, { origin: 'null' })).status).toBe(403);
    // A token taken from another browser's page does not fit this browser's CSRF cookie.
    const other = await overview(await signIn());
    expect((await purge(cookie, `days=0&csrf=${other.csrf}`)).status).toBe(403);
    expect((await inbox.stats()).dead).toBe(1);
  });

  it('refuses a POST whose Sec-Fetch-Site is cross-site or same-site, whatever its Origin says; same-origin, none or none sent pass', async () => {
    const { cookie, csrf } = await overview(await signIn());
    // Retrying an entry the inbox does not hold changes nothing, and answers 303 when let through.
    const retry = (site?: string) =>
      get('/ops/entries/not-there/retry', {
        method: 'POST',
        body: `csrf=${encodeURIComponent(csrf)}`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: server.url, ...(site ? { 'sec-fetch-site': site } : {}) },
      });
    for (const site of ['cross-site', 'same-site', 'Cross-Site', 'something-else']) {
      const refused = await retry(site);
      expect(refused.status, site).toBe(403);
      expect(await refused.text()).toContain('came from another site');
    }
    for (const site of ['same-origin', 'none', undefined]) expect((await retry(site)).status, site).toBe(303);
    // Without an Origin (or with `null`, which chromium sends under Referrer-Policy: no-referrer),
    // only the browser's own word that the page was ours lets it through.
    const noOrigin = (site: string, origin?: string) =>
      get('/ops/entries/not-there/retry', {
        method: 'POST',
        body: `csrf=${encodeURIComponent(csrf)}`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': site, ...(origin ? { origin } : {}) },
      });
    expect((await noOrigin('same-origin')).status).toBe(303);
    expect((await noOrigin('same-origin', 'null')).status).toBe(303);
    expect((await noOrigin('none')).status).toBe(403);
    expect((await noOrigin('none', 'null')).status).toBe(403);
    expect((await noOrigin('same-origin', 'https://evil.example')).status).toBe(403);
  });

  it('retries a dead entry with a valid form, and records who did it in the action log', async () => {
    const { cookie, csrf } = await overview(await signIn());
    const response = await get(`/ops/entries/${encodeURIComponent(hostileId)}/retry`, {
      method: 'POST',
      body: `csrf=${encodeURIComponent(csrf)}`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/ops/entries/${encodeURIComponent(hostileId)}?done=retried`);
    expect((await inbox.entry(hostileId))?.status).toBe('pending');
    const page = await (await get('/ops/', { headers: { cookie } })).text();
    expect(page).toMatch(/<td>token \(127\.0\.0\.1\)<\/td><td>retry<\/td>/);
  });

  it('read-only: no form and no button on any page, and every action answers 403', async () => {
    const readOnly = await listen(createDashboard({ inbox, auth: { token: TOKEN }, readOnly: true }).node);
    closers.push(readOnly.close);
    const cookie = cookiesOf(await fetch(`${readOnly.url}/?token=${TOKEN}`, { redirect: 'manual' }));
    for (const path of ['/', '/entries', `/entries/${encodeURIComponent(hostileId)}`, '/retry-dead', '/purge?days=1']) {
      const page = await (await fetch(`${readOnly.url}${path}`, { headers: { cookie } })).text();
      // Signing out is the one form: it is no action on the inbox.
      const signOut = /<form method="post" action="\/sign-out" class="sign-out">[\s\S]*?<\/form>/;
      expect(page, path).toMatch(signOut);
      expect(page.replace(signOut, ''), path).not.toMatch(/<button|method="post"|csrf/i);
    }
    // The confirmation page of an action is no page at all when actions are off.
    expect((await fetch(`${readOnly.url}/retry-dead`, { headers: { cookie } })).status).toBe(403);
    expect((await fetch(`${readOnly.url}/purge?days=1`, { headers: { cookie } })).status).toBe(403);
    for (const path of ['/purge', '/retry-dead', `/entries/${encodeURIComponent(hostileId)}/retry`]) {
      const response = await fetch(`${readOnly.url}${path}`, { method: 'POST', body: 'days=0', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: readOnly.url } });
      expect(response.status, path).toBe(403);
    }
  });
});

describe('escaping', () => {
  it('shows HTML and script in every field of a delivery as text, on every page', async () => {
    const cookie = await signIn();
    const entryPath = `/ops/entries/${encodeURIComponent(hostileId)}`;
    const pages = ['/ops/', '/ops/entries', `/ops/entries?q=${encodeURIComponent(`order-${HOSTILE}`)}`, `/ops/entries?event=${encodeURIComponent(hostileEvent)}`, entryPath];
    for (const path of pages) {
      const response = await get(path, { headers: { cookie } });
      expect(response.status, path).toBe(200);
      const text = await response.text();
      expect(text, path).not.toContain('<script>');
      expect(text, path).not.toContain('<img src=x');
      expect(text, path).not.toContain('<svg onload');
      expect(text, path).not.toContain('<b>42');
    }
    const entry = await (await get(entryPath, { headers: { cookie } })).text();
    expect(entry).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(entry).toContain('&lt;b&gt;42&lt;/b&gt;');
    // Masked by default: the customer's name, phone and e-mail are not on the page.
    expect(entry).not.toContain('11912345678');
    expect(entry).not.toContain('ana@example.com');
    expect(entry).not.toContain('&lt;i&gt;');
    const list = await (await get(`/ops/entries?q=${encodeURIComponent(`#<b>42</b>${HOSTILE}`)}`, { headers: { cookie } })).text();
    expect(list).toContain(`/ops/entries/${encodeURIComponent(hostileId)}`);
  });

  it('shows personal data only with showPersonalData, still escaped', async () => {
    const open = createDashboard({ inbox, auth: { token: TOKEN }, showPersonalData: true });
    const page = await (await open.fetch(new Request(`http://dash.test/entries/${encodeURIComponent(hostileId)}`, { headers: { authorization: `Bearer ${TOKEN}` } }))).text();
    expect(page).toContain('11912345678');
    expect(page).toContain('&lt;i&gt;&lt;script&gt;');
    expect(page).not.toContain('<i><script>');
  });

  it('retries all dead entries only with the count its confirmation page stated; without it, asks again and changes nothing', async () => {
    const deliveryId = `dlv-retry-all-${Date.now()}`;
    expect((await inbox.handler(deliveryRequest({ event: 'stock.changed', data: {} }, { nowMs: Date.now(), deliveryId }))).status).toBe(200);
    const worker = inbox.startWorker({ handlers: { 'stock.changed': async () => Promise.reject(new Error('no')) }, maxAttempts: 1, pollMs: 20 });
    await waitFor(() => inbox.entry(deliveryId), (entry) => entry?.status === 'dead');
    await worker.stop();
    const dead = (await inbox.stats()).dead;
    const session = await signIn();
    const page = await get('/ops/', { headers: { cookie: session } });
    const cookie = [session, cookiesOf(page)].filter(Boolean).join('; ');
    const csrf = csrfOf(await page.text());
    const post = (body: string) => get('/ops/retry-dead', { method: 'POST', body, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: server.url } });
    const unstated = await post(`csrf=${encodeURIComponent(csrf)}`);
    expect(unstated.status).toBe(409);
    expect(await unstated.text()).toContain(`Retry ${dead} dead`);
    expect((await inbox.stats()).dead).toBe(dead);
    const stated = await post(`csrf=${encodeURIComponent(csrf)}&expected=${dead}`);
    expect(stated.status).toBe(303);
    expect((await inbox.stats()).dead).toBe(0);
    // Two entries now: the next page's cursor comes under the names the route reads, passed back as it is.
    const bearer = { headers: { authorization: `Bearer ${TOKEN}` } };
    const first = (await (await get('/ops/api/entries?limit=1', bearer)).json()) as { entries: { id: string }[]; next: Record<string, string> | null };
    expect(Object.keys(first.next ?? {})).toEqual(['before_at', 'before_id']);
    const second = (await (await get(`/ops/api/entries?limit=1&${new URLSearchParams(first.next!)}`, bearer)).json()) as { entries: { id: string }[] };
    expect(second.entries).toHaveLength(1);
    expect(second.entries[0]!.id).not.toBe(first.entries[0]!.id);
  });
});
