// The flow of dashboard.md end to end in a real browser (Debian's chromium driven by
// playwright-core): the sandbox sends orders into an inbox whose handler fails some of them until
// they are dead; an operator signs in, reads the counts, finds an order by its display number, sees
// its personal data masked, retries a dead entry and watches it become done; a read-only dashboard
// shows no button and refuses the POST. With UPDATE_SCREENSHOTS=1 it also writes
// docs/images/dashboard-*.png.
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createDashboard, type DashboardSync } from 'integration-sdk/dashboard';
import { createInbox, type InboxWorker } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import type { Sync, SyncRunRecord } from 'integration-sdk/sync';
import { api } from '../sandbox/helpers.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { merchantsInbox } from './tenants-support.ts';
import { listen, TOKEN, waitFor } from './support.ts';

const CHROMIUM = '/usr/lib/chromium/chromium';
/** Orders sent while the inbox's receiver was down: missed. */
const MISSED = 2;
const available = existsSync(CHROMIUM);
if (!available && process.env.CI !== 'true') {
  console.log(`Skipping the dashboard's browser tests: no chromium at ${CHROMIUM} (apt-get install chromium).`);
}
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const images = resolve(import.meta.dirname, '../../docs/images');

const record = (run: Omit<SyncRunRecord, 'baseUrl' | 'merchantId' | 'full' | 'complete' | 'orphans' | 'error' | 'durationMs'>): SyncRunRecord => ({
  ...run,
  baseUrl: 'http://127.0.0.1/integration/v1',
  merchantId: 'merchant-1',
  full: false,
  complete: true,
  orphans: null,
  error: null,
  durationMs: 5000,
});

/** A tiny sync with the two methods the dashboard reads, yielding createSync's own run records. */
const sync: DashboardSync & Pick<Sync, 'runs'> = {
  async *runs() {
    yield record({ runId: 'run-3', kind: 'stock', startedAt: new Date(Date.now() - 30_000), finishedAt: new Date(Date.now() - 29_000), outcome: 'completed', total: 1200, unchanged: 1200, sent: 0, updated: 0, errors: 0 });
    yield record({ runId: 'run-2', kind: 'stock', startedAt: new Date(Date.now() - 60_000), finishedAt: new Date(Date.now() - 55_000), outcome: 'completed', total: 1200, unchanged: 1180, sent: 20, updated: 18, errors: 2 });
    yield record({ runId: 'run-1', kind: 'catalog', startedAt: new Date(Date.now() - 3_600_000), finishedAt: new Date(Date.now() - 3_590_000), outcome: 'completed', total: 500, unchanged: 0, sent: 500, created: 499, updated: 0, errors: 1 });
  },
  async *runErrors(runId) {
    if (runId === 'run-2') {
      yield { index: 17, external_id: 'SKU-17', store_id: 'store-1', code: 'PRODUCT_NOT_FOUND', message: 'no such product' };
      yield { index: 40, external_id: '=HYPERLINK("x")', code: 'VALIDATION_ERROR', message: 'price, "must" be > 0' };
    }
  },
};

describe.skipIf(!available && process.env.CI !== 'true')('the dashboard in a real browser', () => {
  const dir = tempDir('dashboard-browser');
  let sandbox: Sandbox;
  let browser: Browser;
  let worker: InboxWorker;
  let inbox: ReturnType<typeof createInbox>;
  const failing = new Set<string>();
  const servers: Array<{ close(): Promise<void> }> = [];
  let url: string;
  let readOnlyUrl: string;
  const orders: { order_id: string; display_number: string; customer: { name: string; phone: string } }[] = [];

  beforeAll(async () => {
    // A fast retry schedule: the service gives up on the unreachable endpoint within a second.
    sandbox = await createSandbox({ rate: false, timeScale: 0.00002 });
    // The receiver's port is needed to register it, and the secret to build the inbox.
    let handler: ((request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => void) | undefined;
    // While `down`, the receiver answers 503: the service gives up on what it sent meanwhile.
    let down = false;
    const receiver = await listen((request, response) => (down ? response.writeHead(503).end() : handler!(request, response)));
    servers.push(receiver);
    const created = await api(sandbox)('POST', '/webhooks', { url: `${receiver.url}/webhooks`, events: ['order.created', 'order.status_changed'] });
    // Another integration's endpoint on the same key, nobody listening: its deliveries die at the
    // service, but they were never the inbox's to receive.
    const closed = await listen(() => {});
    await closed.close();
    await api(sandbox)('POST', '/webhooks', { url: `${closed.url}/hooks`, events: ['order.created'] });
    const own = (created.body as { id: string; secret: string });
    inbox = createInbox({ secret: own.secret, store: sqliteStore({ path: join(dir.path, 'inbox.db') }), endpointIds: [own.id] });
    handler = inbox.handler.node;
    down = true;
    for (let n = 0; n < MISSED; n += 1) sandbox.createOrder();
    await sandbox.idle();
    down = false;
    worker = inbox.startWorker({
      handlers: {
        'order.created': async (event) => {
          const number = (event.data as { display_number: string }).display_number;
          if (failing.has(number)) throw new Error(`ERP refused order #${number}: unknown product SKU-404`);
        },
      },
      maxAttempts: 2,
      retryDelayMs: () => 20,
      pollMs: 20,
    });
    for (let n = 0; n < 8; n += 1) {
      const order = sandbox.createOrder() as unknown as (typeof orders)[number];
      orders.push(order);
      if (n % 3 === 1) failing.add(order.display_number);
    }
    sandbox.setOrderStatus(orders[0]!.order_id, 'cancelled');
    await sandbox.idle();
    await waitFor(() => inbox.stats(), (stats) => stats.dead === failing.size && stats.pending === 0 && stats.processing === 0, 15_000);

    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    // The reconcile finds the deliveries the receiver was down for: missed, open until acknowledged.
    expect((await inbox.reconcile({ client })).missed).toHaveLength(MISSED);
    const dashboard = createDashboard({ inbox, client, sync, auth: { token: TOKEN }, basePath: '/integration' });
    const server = await listen(dashboard.node);
    servers.push(server);
    url = `${server.url}/integration`;
    const readOnly = await listen(createDashboard({ inbox, client, auth: { token: TOKEN }, readOnly: true, basePath: '/integration' }).node);
    servers.push(readOnly);
    readOnlyUrl = `${readOnly.url}/integration`;

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    if (SCREENSHOTS) mkdirSync(images, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await Promise.all(servers.map((server) => server.close()));
    await inbox?.close();
    await sandbox?.close();
    dir.remove();
  });

  const shoot = async (page: Page, name: string) => {
    if (SCREENSHOTS) await page.screenshot({ path: join(images, `dashboard-${name}.png`), fullPage: true });
  };
  async function signedIn(base = url, viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(`${base}/?token=${TOKEN}`);
    return page;
  }

  it('without a sign-in, shows the sign-in page styled like the others, naming the token link', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const response = await page.goto(`${url}/entries`);
    expect(response?.status()).toBe(401);
    expect(await page.getByRole('heading', { name: 'Sign-in required' }).count()).toBe(1);
    // The stylesheet applied: the header bar has its dark background.
    expect(await page.locator('header.top').evaluate((header) => getComputedStyle(header).backgroundColor)).toBe('rgb(31, 41, 55)');
    expect(await page.locator('main').textContent()).not.toMatch(/password/i);
    await shoot(page, 'sign-in');
    await context.close();
  });

  it('signs in with the one-time link, drops the token from the address, and shows the counts of the store', async () => {
    const page = await signedIn();
    expect(page.url()).toBe(`${url}/`);
    expect(await page.content()).not.toContain(TOKEN);
    const stats = await inbox.stats();
    const counts = Object.fromEntries(
      await page.locator('#counts > div').evaluateAll((cards) => cards.map((card) => [card.querySelector('dt')!.textContent!.trim(), Number(card.querySelector('dd')!.textContent!.trim())])),
    );
    expect(counts).toEqual({ received: stats.received, pending: stats.pending, processing: stats.processing, done: stats.done, dead: stats.dead });
    // The banner says what needs attention: the dead entries, and what to do.
    const banner = page.getByRole('region', { name: 'Needs attention' });
    await expect.poll(() => banner.textContent()).toContain(`${failing.size} entries are dead`);
    expect(await banner.textContent()).toContain(`${MISSED} deliveries the service gave up on (or is still retrying) never reached the inbox`);
    expect(await page.locator('#missed tbody tr').count()).toBe(MISSED);
    expect(await banner.textContent()).toMatch(/failed its last \d+ deliveries/);
    expect(await page.locator('svg[role="img"]').count()).toBe(2);
    expect(await page.getByRole('heading', { name: 'Action log' }).count()).toBe(1);
    await shoot(page, 'overview');
    const phone = await signedIn(url, { width: 390, height: 844 });
    await shoot(phone, 'overview-phone');
    await phone.context().close();
    await page.context().close();
  });

  it('finds an order by its display number and shows its payload with personal data masked', async () => {
    const page = await signedIn();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Entries', exact: true }).click();
    const order = orders[0]!;
    await page.getByLabel('Delivery id, order id, order number or external order id').fill(order.display_number);
    await page.getByRole('button', { name: 'Show' }).click();
    const rows = page.locator('tbody tr');
    // Its order.created and its status change.
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain(`#${order.display_number}`);
    await shoot(page, 'entries');
    await rows.filter({ hasText: 'order.created' }).getByRole('link').click();
    await page.getByRole('heading', { name: 'Payload' }).waitFor();
    const text = await page.locator('main').textContent();
    expect(text).toContain(order.order_id);
    expect(text).not.toContain(order.customer.name);
    expect(text).not.toContain(order.customer.phone);
    expect(text).toContain('•••');
    // The order's other event, in its timeline.
    expect(await page.getByRole('region', { name: "The order's other events" }).textContent()).toContain('order.status_changed');
    await shoot(page, 'entry');
    await page.context().close();
  });

  it('retries a dead entry and watches it become done', async () => {
    const page = await signedIn();
    await page.goto(`${url}/entries?status=dead`);
    const dead = page.locator('tbody tr');
    expect(await dead.count()).toBe(failing.size);
    expect(await dead.first().textContent()).toContain('ERP refused order');
    await shoot(page, 'entries-dead');
    await dead.first().getByRole('link').click();
    const number = (await page.locator('#entry-facts').textContent())!.match(/#(\S+)/)![1]!;
    failing.delete(number); // the cause is fixed
    await page.getByRole('button', { name: 'Retry this entry' }).click();
    await expect.poll(() => page.locator('[role="status"]').textContent()).toContain('back to pending');
    // The page refreshes itself while the entry is pending.
    await expect.poll(async () => page.locator('#entry-status').textContent(), { timeout: 15_000 }).toBe('done');
    await page.goto(`${url}/`);
    expect(await page.locator('#log-title + .table-wrap tbody tr').first().textContent()).toContain('retry');
    await page.goto(`${url}/retry-dead`);
    expect(await page.locator('#retry-dead-count').textContent()).toContain(`${failing.size} dead entries`);
    await shoot(page, 'retry-dead');
    // Purging asks first too; the entries died a moment ago, so nothing is a day old yet.
    await page.goto(`${url}/`);
    await page.getByLabel('Delete dead entries older than (days)').fill('1');
    await page.getByRole('button', { name: 'Purge dead entries…' }).click();
    expect(await page.locator('#purge-count').textContent()).toMatch(/No dead entry finished more than 1 day ago/);
    // Signing out ends the session: the next page asks for a sign-in.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    expect((await page.goto(`${url}/`))?.status()).toBe(401);
    await page.context().close();
  });

  it('shows the service panel with the endpoint and its deliveries, and the sync runs', async () => {
    const page = await signedIn();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Service', exact: true }).click();
    await page.getByRole('heading', { name: /Deliveries to/ }).first().waitFor();
    expect(await page.locator('main').textContent()).toContain('delivered');
    // Only the inbox's own endpoint's deliveries that never arrived: not the other integration's.
    expect(await page.locator('tbody .missed').count()).toBe(MISSED);
    await shoot(page, 'service');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Sync', exact: true }).click();
    expect(await page.locator('tbody tr').count()).toBe(3);
    // A run with rejected items is told apart from a clean one.
    expect(await page.locator('tbody tr.run-row-warn').count()).toBe(2);
    expect(await page.locator('tbody tr.run-row-ok').textContent()).toContain('run-3');
    await shoot(page, 'sync');
    const csv = await page.request.get(`${url}/sync/runs/run-2/errors.csv`);
    expect(await csv.text()).toBe('index,external_id,store_id,code,message\r\n17,SKU-17,store-1,PRODUCT_NOT_FOUND,no such product\r\n40,"\'=HYPERLINK(""x"")",,VALIDATION_ERROR,"price, ""must"" be > 0"\r\n');
    await page.context().close();
  });

  it('acknowledges a missed delivery once dealt with: it leaves the list, and the action log says who', async () => {
    const page = await signedIn();
    const [first] = await inbox.missed();
    await page.getByRole('button', { name: `Acknowledge missed delivery ${first!.deliveryId}` }).click();
    await expect.poll(() => page.locator('[role="status"]').textContent()).toContain('The missed delivery is acknowledged');
    expect(await page.locator('#missed tbody tr').count()).toBe(MISSED - 1);
    expect(await page.locator('#log-title + .table-wrap tbody tr').first().textContent()).toContain(`acknowledge-missedmissed delivery ${first!.deliveryId}: acknowledged`);
    expect((await inbox.missed({ ended: true }))[0]).toMatchObject({ deliveryId: first!.deliveryId, ended: { how: 'acknowledged' } });
    await page.context().close();
  });

  it('given tenants: the Tenants page lists a refused key first, and the header filter scopes the pages to one tenant', async () => {
    const world = await merchantsInbox({ ids: ['loja-centro', 'loja-norte', 'loja-sul'], orders: [3, 1, 2], failing: 'loja-sul', revoked: 'loja-norte' });
    const server = await listen(createDashboard({ inbox: world.inbox, tenants: world.tenants, auth: { token: TOKEN }, basePath: '/integration' }).node);
    servers.push(server);
    const base = `${server.url}/integration`;

    const page = await signedIn(base);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Tenants', exact: true }).click();
    const rows = page.locator('#tenants tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(0).textContent()).toMatch(/loja-norte\s*key_invalid/);
    expect(await rows.nth(1).textContent()).toMatch(/loja-centro\s*active\s*delivering/);
    expect(await rows.nth(2).textContent()).toMatch(/loja-sul\s*active\s*delivering[\s\S]*\b0\s*2\b/);
    const content = await page.content();
    for (const merchant of world.sandbox.merchants) expect(content).not.toContain(merchant.keys[0]!.apiKey.split('_')[2]!);
    expect(content).not.toMatch(/whsec_/);
    await shoot(page, 'tenants');

    await page.getByRole('search', { name: 'Tenant' }).getByRole('textbox').fill('loja-sul');
    await page.getByRole('search', { name: 'Tenant' }).getByRole('button', { name: 'Show' }).click();
    await page.getByRole('heading', { name: 'Overview of tenant loja-sul' }).waitFor();
    expect(page.url()).toBe(`${base}/t/loja-sul/`);
    const stats = await world.inbox.stats({ tenant: 'loja-sul' });
    expect(await page.locator('#counts a[aria-label$="dead entries"]').textContent()).toBe(String(stats.dead));
    expect(await page.getByRole('region', { name: 'Needs attention' }).textContent()).toContain('2 entries are dead');
    await shoot(page, 'tenant-overview');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Entries', exact: true }).click();
    expect(page.url()).toBe(`${base}/t/loja-sul/entries`);
    expect(await page.locator('tbody tr').count()).toBe(stats.received);
    await page.context().close();
  });

  it('read-only: no button on any page, and the POST is refused', async () => {
    const page = await signedIn(readOnlyUrl);
    // No action button nor form: signing out is the one, and it is no action on the inbox.
    const actionButtons = () => page.getByRole('button').filter({ hasNotText: /^(Show|Sign out)$/ });
    for (const path of ['/', '/entries?status=dead', '/service']) {
      await page.goto(`${readOnlyUrl}${path}`);
      expect(await actionButtons().count(), path).toBe(0);
      expect(await page.locator('form[method="post"]:not(.sign-out)').count(), path).toBe(0);
    }
    const [dead] = await (async () => {
      const rows: string[] = [];
      for await (const entry of inbox.entries({ status: 'dead' })) rows.push(entry.id);
      return rows;
    })();
    await page.goto(`${readOnlyUrl}/entries/${dead}`);
    expect(await actionButtons().count()).toBe(0);
    const response = await page.request.post(`${readOnlyUrl}/entries/${dead}/retry`, { form: { csrf: 'x' }, headers: { origin: new URL(readOnlyUrl).origin } });
    expect(response.status()).toBe(403);
    expect((await inbox.entry(dead!))?.status).toBe('dead');
    await page.context().close();
  });
});
