// The dashboard given `tenants`, over plain HTTP, against the sandbox's merchants delivering into
// one inbox for many merchants on a real socket: the Tenants page (key_invalid first, endpoint
// health, last order, pending and dead per tenant, never a key or a secret) and the tenant filter
// (every page, its entries, counts, actions and service panel, scoped to one tenant).
import { beforeEach, describe, expect, it } from 'vitest';
import { createDashboard, type Dashboard } from 'integration-sdk/dashboard';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import type { TenantsWorld } from '../inbox/support/tenants-world.ts';
import { csrfOf, TOKEN } from './support.ts';
import { merchantsInbox } from './tenants-support.ts';

const ORIGIN = 'http://dash.test';
const rowsOf = (html: string) => /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1]?.split('</tr>').filter((row) => row.includes('<td')) ?? [];

describe('the dashboard of an inbox for many merchants', () => {
  let world: TenantsWorld;
  let dashboard: Dashboard;
  const secrets: string[] = [];
  const keys: string[] = [];

  beforeEach(async () => {
    // A new world for each test (closed after it): sockets, files and registry.
    secrets.length = 0;
    keys.length = 0;
    // loja-c's ERP refuses its orders (they die); loja-a's merchant revokes its key (key_invalid).
    world = await merchantsInbox({ ids: ['loja-a', 'loja-b', 'loja-c'], orders: [1, 2, 2], failing: 'loja-c', revoked: 'loja-a' });
    for (const [index, id] of ['loja-a', 'loja-b', 'loja-c'].entries()) {
      keys.push(world.sandbox.merchants[index]!.keys[0]!.apiKey);
      secrets.push((await tenantsInternals(world.tenants)!.secretsFor(id))![0]!.secret);
    }
    dashboard = createDashboard({ inbox: world.inbox, tenants: world.tenants, auth: { token: TOKEN } });
  }, 60_000);

  const get = (path: string, cookie?: string) => dashboard.fetch(new Request(`${ORIGIN}${path}`, { headers: cookie ? { cookie } : { authorization: `Bearer ${TOKEN}` } }));
  const text = async (path: string) => (await get(path)).text();

  it('lists every tenant, key_invalid first, with its status, endpoint health, last order, pending and dead, and never a key or a secret', async () => {
    const html = await text('/tenants');
    const rows = rowsOf(/<table id="tenants">[\s\S]*?<\/table>/.exec(html)![0]);
    expect(rows.map((row) => />(loja-\w)<\/a>/.exec(row)![1])).toEqual(['loja-a', 'loja-b', 'loja-c']);
    expect(rows[0]).toMatch(/key_invalid[\s\S]*key refused/);
    expect(rows[0]).toContain('not checked: its key is refused');
    expect(html).toMatch(/<strong>1 tenant has its key refused<\/strong>/);
    for (const [index, id] of ['loja-b', 'loja-c'].entries()) {
      const row = rows[index + 1]!;
      const stats = await world.inbox.stats({ tenant: id });
      expect(row).toContain('<span class="run-ok">delivering</span>');
      expect(row).toContain(`${stats.pending} pending entries of ${id}`);
      expect(row).toContain(`${stats.dead} dead entries of ${id}`);
      expect(row).toMatch(/<time datetime="[^"]+">/); // its last order
      expect(row).toContain(`href="/t/${id}/"`);
    }
    expect(rows[2]).toContain('2 dead entries of loja-c');
    for (const value of [...keys, ...keys.map((key) => key.split('_')[2]!), ...secrets]) expect(html).not.toContain(value);
    expect(html).not.toMatch(/whsec_|service_[a-z0-9]+_/);
  });

  it("scopes every page to the tenant picked in the header's filter: its counts, its entries, its service panel", async () => {
    const picked = await get('/tenant?tenant=loja-b');
    expect(picked.status).toBe(303);
    expect(picked.headers.get('location')).toBe('/t/loja-b/');
    expect((await get('/tenant?tenant=')).headers.get('location')).toBe('/');

    const overview = await text('/t/loja-b/');
    const stats = await world.inbox.stats({ tenant: 'loja-b' });
    expect(overview).toContain('<h1>Overview of tenant loja-b</h1>');
    expect(overview).toContain(`aria-label="${stats.received} entries held"`);
    expect(overview).toContain('value="loja-b"'); // the filter shows the tenant
    expect(overview).toContain('href="/t/loja-b/entries?status=done"');
    expect(overview).toContain('<a href="/">All tenants</a>');

    const entries = await text('/t/loja-b/entries');
    const listed = [...entries.matchAll(/href="\/t\/loja-b\/entries\/([^"]+)"/g)].map((match) => decodeURIComponent(match[1]!));
    const own: string[] = [];
    for await (const entry of world.inbox.entries({ tenant: 'loja-b' })) own.push(entry.id);
    expect(listed.sort()).toEqual(own.sort());
    // The list of every tenant names each entry's tenant and links into its pages.
    const all = await text('/entries');
    expect(all).toContain('<th scope="col">Tenant</th>');
    for (const id of own) expect(all).toContain(`href="/t/loja-b/entries/${id}"`);
    expect((await get(`/t/loja-b/entries/${own[0]}`)).status).toBe(200);
    expect((await get(`/t/loja-c/entries/${own[0]}`)).status).toBe(404);

    // Its own key's endpoints, through its client.
    const service = await text('/t/loja-b/service');
    expect(service).toContain((await world.tenants.get('loja-b'))!.endpointId!);
    expect(service).not.toContain((await world.tenants.get('loja-c'))!.endpointId!);
    expect((await get('/service')).status).toBe(404); // with tenants: pick one first
    expect((await get('/t/loja-nobody/')).status).toBe(404);
    expect((await get('/t/..%2F/')).status).toBe(404);
  });

  it("retries one tenant's dead entries from its pages, and only those; the action log says which tenant", async () => {
    const signIn = await get(`/t/loja-c/?token=${TOKEN}`, '');
    const session = signIn.headers.getSetCookie().map((each) => each.split(';')[0]).join('; ');
    const confirm = await get('/t/loja-c/retry-dead', session);
    const cookie = [session, ...confirm.headers.getSetCookie().map((each) => each.split(';')[0])].join('; ');
    const page = await confirm.text();
    expect(page).toContain('<strong>2 dead entries</strong> will go back to pending');
    expect(page).toContain('action="/t/loja-c/retry-dead"');
    const done = await dashboard.fetch(
      new Request(`${ORIGIN}/t/loja-c/retry-dead`, { method: 'POST', body: `csrf=${encodeURIComponent(csrfOf(page))}&expected=2`, headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' } }),
    );
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/t/loja-c/?done=retry-dead&n=2');
    expect(await world.inbox.stats({ tenant: 'loja-c' })).toMatchObject({ dead: 0, pending: 2 });
    expect(await text('/')).toContain('<td>retry-dead</td><td>tenant loja-c: 2 dead entries back to pending');
  });

  it('has neither a Tenants page nor tenant pages without tenants', async () => {
    const fixture = sqliteInbox();
    try {
      const single = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN } });
      const ask = (path: string) => single.fetch(new Request(`${ORIGIN}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }));
      expect((await ask('/tenants')).status).toBe(404);
      expect((await ask('/t/loja-a/')).status).toBe(404);
      expect(await (await ask('/')).text()).not.toContain('tenant-filter');
    } finally {
      await fixture.dispose();
    }
  });
});
