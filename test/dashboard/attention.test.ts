// What the dashboard says needs attention, by the inbox's own rules: missed deliveries are those
// `inbox.missed()` keeps open (only the inbox's endpoints, against the sandbox's real delivery log),
// each acknowledged by a button that goes through the CSRF and same-origin checks and into the
// action log; "no worker is running" is the rule `doctor --store` uses (src/inbox/health.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createDashboard, type Dashboard } from 'integration-sdk/dashboard';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { api, startReceiver } from '../sandbox/helpers.ts';
import { deliveryRequest, manualClock, orderCreated, sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { TOKEN } from './support.ts';

const rowOf = (html: string, text: string) => /<tr[^>]*>(?:(?!<\/tr>)[\s\S])*<\/tr>/g[Symbol.match](html)?.find((row) => row.includes(text)) ?? '';

describe('missed deliveries', () => {
  let sandbox: Sandbox;
  let fixture: ReturnType<typeof sqliteInbox>;
  let dashboard: Dashboard;
  let ownId: string;
  let otherId: string;
  const origin = 'http://dash.test';

  beforeAll(async () => {
    // Every attempt fails at once and the service gives up within a second.
    sandbox = await createSandbox({ rate: false, timeScale: 0.00002 });
    const down = await startReceiver();
    await down.close();
    const own = await api(sandbox)('POST', '/webhooks', { url: `${down.url}/own`, events: ['order.created'] });
    const other = await api(sandbox)('POST', '/webhooks', { url: `${down.url}/another-integration`, events: ['order.created'] });
    ownId = (own.body as { id: string }).id;
    otherId = (other.body as { id: string }).id;
    fixture = sqliteInbox({ endpointIds: [ownId] });
    sandbox.createOrder();
    sandbox.createOrder();
    await sandbox.idle();
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const report = await fixture.inbox.reconcile({ client });
    expect(report.missed).toHaveLength(2);
    dashboard = createDashboard({ inbox: fixture.inbox, client, auth: { token: TOKEN } });
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    await fixture?.dispose();
  });

  const get = async (path: string, cookie = '') => dashboard.fetch(new Request(`${origin}${path}`, { headers: cookie ? { cookie } : { authorization: `Bearer ${TOKEN}` } }));
  async function session(board = dashboard): Promise<{ cookie: string; page: string }> {
    const signIn = await board.fetch(new Request(`${origin}/?token=${TOKEN}`));
    let cookie = signIn.headers.getSetCookie().map((each) => each.split(';')[0]).join('; ');
    const overview = await board.fetch(new Request(`${origin}/`, { headers: { cookie } }));
    cookie = [cookie, ...overview.headers.getSetCookie().map((each) => each.split(';')[0])].join('; ');
    return { cookie, page: await overview.text() };
  }
  const acknowledge = (board: Dashboard, cookie: string, deliveryId: string, body: string, headers: Record<string, string> = {}) =>
    board.fetch(new Request(`${origin}/missed/${encodeURIComponent(deliveryId)}/acknowledge`, { method: 'POST', body, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin, ...headers } }));

  it("marks missed only the inbox's own endpoint's deliveries, as inbox.missed() keeps them", async () => {
    const html = await (await get('/service')).text();
    for (const delivery of sandbox.deliveries({ webhookId: ownId })) expect(rowOf(html, delivery.id)).toContain('<span class="missed">missed</span>');
    const others = sandbox.deliveries({ webhookId: otherId });
    expect(others.map((delivery) => delivery.status)).toEqual(['dead', 'dead']);
    for (const delivery of others) {
      expect(rowOf(html, delivery.id)).toContain('dead');
      expect(rowOf(html, delivery.id)).not.toContain('class="missed"');
    }
  });

  it('lists the open misses on the overview, counted in the banner, each with an acknowledge button', async () => {
    const html = await (await get('/')).text();
    expect(html).toMatch(/<strong>2 deliveries the service gave up on \(or is still retrying\) never reached the inbox<\/strong>/);
    const listed = /<table id="missed">[\s\S]*?<\/table>/.exec(html)![0];
    for (const missed of await fixture.inbox.missed()) {
      expect(rowOf(listed, missed.deliveryId)).toContain(`action="/missed/${missed.deliveryId}/acknowledge"`);
    }
    expect(listed).not.toContain(sandbox.deliveries({ webhookId: otherId })[0]!.id);
  });

  it('acknowledges one with a valid form, recorded with who did it; a forged token or another origin changes nothing', async () => {
    const [first, second] = await fixture.inbox.missed();
    const { cookie, page } = await session();
    const csrf = /name="csrf" value="([^"]*)"/.exec(page)![1]!;
    expect((await acknowledge(dashboard, cookie, first!.deliveryId, 'csrf=forged')).status).toBe(403);
    expect((await acknowledge(dashboard, cookie, first!.deliveryId, `csrf=${encodeURIComponent(csrf)}`, { origin: 'https://evil.example' })).status).toBe(403);
    expect(await fixture.inbox.missed()).toHaveLength(2);

    const done = await acknowledge(dashboard, cookie, first!.deliveryId, `csrf=${encodeURIComponent(csrf)}`);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/?done=acknowledged#missed-title');
    expect((await fixture.inbox.missed()).map((each) => each.deliveryId)).toEqual([second!.deliveryId]);
    const [ended] = await fixture.inbox.missed({ ended: true });
    expect(ended).toMatchObject({ deliveryId: first!.deliveryId, ended: { how: 'acknowledged', by: 'token' } });
    const after = await (await get('/?done=acknowledged', cookie)).text();
    expect(after).toContain('The missed delivery is acknowledged');
    expect(after).toMatch(new RegExp(`<td>token</td><td>acknowledge-missed</td><td>missed delivery ${first!.deliveryId}: acknowledged</td>`));
    expect(after).toMatch(/<strong>1 delivery the service gave up on/);

    // Again: no open miss has that id any more; said so, and logged.
    const again = await acknowledge(dashboard, cookie, first!.deliveryId, `csrf=${encodeURIComponent(csrf)}`);
    expect(again.headers.get('location')).toBe('/?done=not-acknowledged#missed-title');
  });

  it('read-only: no acknowledge button, and the POST answers 403', async () => {
    const readOnly = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN }, readOnly: true });
    const { cookie, page } = await session(readOnly);
    const [open] = await fixture.inbox.missed();
    expect(page).toContain(open!.deliveryId);
    expect(page).not.toContain('/acknowledge');
    expect((await acknowledge(readOnly, cookie, open!.deliveryId, 'csrf=x')).status).toBe(403);
    expect(await fixture.inbox.missed()).toHaveLength(1);
  });
});

describe('no worker is running', () => {
  it("is said by doctor's rule: only once work has waited more than a minute with no worker claiming", async () => {
    const { clock, manual } = manualClock();
    const fixture = sqliteInbox({ clock });
    try {
      expect((await fixture.inbox.handler(deliveryRequest(orderCreated(), { nowMs: manual.now() }))).status).toBe(200);
      const dashboard = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN } });
      const banner = async () => /<section aria-labelledby="attention-title"[\s\S]*?<\/section>/.exec(await (await dashboard.fetch(new Request('http://dash.test/', { headers: { authorization: `Bearer ${TOKEN}` } }))).text())![0];
      // Just stored: a worker may be about to take it.
      expect(await banner()).toContain('Nothing needs attention');
      manual.advance(2 * 60_000);
      expect(await banner()).toMatch(/<strong>No worker is running<\/strong>: 1 entry waits, the oldest for 2 min,\s+and no worker has claimed work yet/);
    } finally {
      await fixture.dispose();
    }
  });
});
