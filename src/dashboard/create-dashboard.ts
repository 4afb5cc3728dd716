import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import { ConfigurationError } from '../errors/integration-error.ts';
import type { Inbox } from '../inbox/create-inbox.ts';
import type { InboxEntryStatus } from '../inbox/store.ts';
import { registerActionRoutes, type DashboardEnv as Env } from './action-routes.ts';
import { createAuth, CSRF_COOKIE, cookieHeader, cookieOf, type DashboardAction, type DashboardAuth } from './auth.ts';
import {
  createActivityReader,
  csvField,
  weekStart,
  describeError,
  readEntries,
  readOverview,
  readService,
  readSyncRuns,
  readTimeline,
  STATUSES,
  storeOf,
  type DashboardClient,
  type DashboardSync,
  type EntriesQuery,
} from './data.ts';
import { payloadForDisplay, payloadView } from './personal-data.ts';
import { entriesPage, entryPage, messagePage, overviewPage, servicePage, syncPage, type PageFrame } from './pages.ts';
import { linkUsedPage, signInPage } from './sign-in-pages.ts';
import { STYLESHEET } from './style.ts';
import { registerTenantRoutes } from './tenant-routes.ts';
import { scopeOf, tenantBase, withPath } from './tenant-scope.ts';
import { tenantsInternals } from '../tenants/create-tenants.ts';
import type { Tenants } from '../tenants/types.ts';

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** The inbox to show, from `createInbox` (required). */
  inbox: Inbox;
  /** An `IntegrationClient`: adds the key's health, the webhook endpoints and their deliveries. */
  client?: DashboardClient;
  /** A sync from `createSync`: adds its run history and each run's rejected items as CSV. */
  sync?: DashboardSync;
  /**
   * The tenants registry (`createTenants`) of an inbox that receives for many merchants: adds the
   * Tenants page (status, endpoint health, last order, pending and dead per tenant, `key_invalid`
   * first) and a tenant filter on every page (`<basePath>/t/<tenant>/…`, whose Service page uses
   * that tenant's client). Never shows a key or a secret.
   */
  tenants?: Tenants;
  /**
   * Who may look and act (required; the dashboard is never open): `{ token }` (the first visit
   * opens `?token=…`, which sets an HttpOnly cookie; scripts send `Authorization: Bearer …`),
   * `{ basic: { username, password } }`, or `{ authorize(request, action) }` with `action` one of
   * `view`, `retry`, `retry-dead`, `purge`, `webhook-test`, `acknowledge-missed` (the tenant a
   * scoped page shows is in its path, `<basePath>/t/<tenant>/…`).
   */
  auth: DashboardAuth;
  /** No action buttons, and the action routes answer 403. @default false */
  readOnly?: boolean;
  /** Show customers' names, phones, e-mails and addresses unmasked. @default false */
  showPersonalData?: boolean;
  /** Where it is mounted, e.g. `/integration`. @default '' (the root) */
  basePath?: string;
  /**
   * How long a `{ token }` sign-in lasts, in hours: each sign-in starts a fresh random session in
   * this process, which ends then or when its user signs out. @default 12
   */
  sessionHours?: number;
}

/** The dashboard's handlers: {@link createDashboard}. */
export interface Dashboard {
  /** A Fetch handler (Hono, Next.js route handlers, Bun, Deno). */
  fetch(request: Request): Promise<Response>;
  /** A node:http / Express listener. */
  node(request: IncomingMessage, response: ServerResponse): void;
}

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PAGE_SIZE = 50;

function normaliseBasePath(basePath: unknown): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (typeof basePath !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+\/?$/.test(basePath)) {
    throw new ConfigurationError("createDashboard: basePath must be a path such as '/integration' (letters, digits, '.', '_', '~', '-').");
  }
  return basePath.replace(/\/$/, '');
}

function sessionHoursOf(value: unknown): number {
  if (value === undefined) return 12;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 24 * 366) {
    throw new ConfigurationError('createDashboard: sessionHours must be a number of hours above 0 (at most a year), such as 12.');
  }
  return value;
}

const FLASHES: Record<string, (n: number) => string> = {
  retried: () => 'The entry is back to pending: a worker will run it again.',
  'not-retried': () => 'That entry could not be retried: only dead and done entries can.',
  'retry-dead': (n) => `${n} dead ${n === 1 ? 'entry is' : 'entries are'} back to pending.`,
  purged: (n) => `${n} dead ${n === 1 ? 'entry was' : 'entries were'} deleted.`,
  tested: () => 'The service accepted a test delivery for that endpoint.',
  acknowledged: () => 'The missed delivery is acknowledged: it no longer counts as missed.',
  'not-acknowledged': () => 'No open missed delivery has that id (it arrived, was recovered or was acknowledged meanwhile).',
  'test-failed': () => 'The test delivery could not be sent: see the action log.',
};

/**
 * The operator's dashboard: a web page over the inbox (counts, activity, entries with search, each
 * entry with its order's events), the service (key health, endpoints, missed deliveries) and the
 * sync history, with retry and purge buttons. Server-rendered HTML, no script, strict CSP; closed
 * without `auth`; personal data masked unless `showPersonalData`.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createDashboard } from 'integration-sdk/dashboard';
 *
 * const dashboard = createDashboard({ inbox, client, auth: { token: process.env.DASHBOARD_TOKEN! }, basePath: '/integration' });
 * express().use('/integration', dashboard.node).listen(3000);
 * // open http://localhost:3000/integration/?token=<DASHBOARD_TOKEN> once; a cookie keeps you in
 * ```
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  if (!options || typeof options !== 'object') throw new ConfigurationError('createDashboard needs { inbox, auth }.');
  const base = normaliseBasePath(options.basePath);
  const source = storeOf(options.inbox);
  const auth = createAuth(options.auth, base === '' ? '/' : base, source.clock, sessionHoursOf(options.sessionHours));
  const { inbox, client, sync, tenants } = options;
  if (tenants !== undefined && tenantsInternals(tenants) === undefined) {
    throw new ConfigurationError('createDashboard: tenants must come from createTenants (integration-sdk/tenants).');
  }
  if (client !== undefined && (typeof client?.health !== 'function' || typeof client?.webhooks?.list !== 'function')) {
    throw new ConfigurationError('createDashboard: client must be an IntegrationClient.');
  }
  if (sync !== undefined && (typeof sync?.runs !== 'function' || typeof sync?.runErrors !== 'function')) {
    throw new ConfigurationError('createDashboard: sync must come from createSync (with runs() and runErrors()).');
  }
  const readOnly = options.readOnly === true;
  const activity = createActivityReader(source);
  // The week's buckets are counted once, from now, rather than on the first operator's page load.
  void source.ready().then(
    () => activity.prefetch(source.clock.now(), weekStart(source.clock.now())),
    () => {},
  );
  const showPersonalData = options.showPersonalData === true;

  const app = new Hono<Env>({ strict: false });
  const routes = base === '' ? app : app.basePath(base);

  // Every answer, errors included: no framing, no referrer, nothing cached, no inline anything.
  app.use(
    '*',
    secureHeaders({
      xFrameOptions: 'DENY',
      referrerPolicy: 'no-referrer',
      crossOriginResourcePolicy: 'same-origin',
      crossOriginOpenerPolicy: 'same-origin',
    }),
  );
  app.use('*', async (c, next) => {
    await next();
    c.res.headers.set('Content-Security-Policy', CSP);
    c.res.headers.set('Cache-Control', 'no-store');
    c.res.headers.set('X-Frame-Options', 'DENY');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
  });

  routes.get('/assets/dashboard.css', (c) => c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8' }));

  const tenantOf = (c: Context<Env>): string | undefined => c.get('tenant');
  // A tenant's pages talk to the service with that tenant's client.
  const clientFor = (c: Context<Env>): DashboardClient | undefined => {
    const tenant = tenantOf(c);
    return tenant !== undefined && tenants ? tenants.client(tenant) : client;
  };
  const frameOf = (c: Context<Env>): PageFrame => {
    const done = c.req.query('done');
    const n = Number(c.req.query('n') ?? 0);
    const flash = done && FLASHES[done] ? FLASHES[done]!(Number.isSafeInteger(n) && n >= 0 ? n : 0) : undefined;
    const tenant = tenantOf(c);
    return {
      base: tenant === undefined ? base : tenantBase(base, tenant),
      root: base,
      ...(tenant === undefined ? {} : { tenant }),
      hasTenants: tenants !== undefined,
      readOnly,
      hasClient: client !== undefined,
      hasSync: sync !== undefined,
      csrf: c.get('csrf'),
      flash,
      session: c.get('session'),
    };
  };
  const page = async (c: Context<Env>, body: ReturnType<typeof overviewPage>, status: 200 | 400 | 401 | 403 | 404 | 409 | 500 = 200) => {
    const cookie = c.get('setCsrfCookie');
    if (cookie) c.header('Set-Cookie', cookie, { append: true });
    return c.html(await body, status);
  };
  const actionOf = (method: string, path: string): DashboardAction => {
    const local = path.slice(base.length);
    // An action's confirmation page is asked for as the action: no form for who may not send it.
    if (/^\/retry-dead\/?$/.test(local)) return 'retry-dead';
    if (/^\/purge\/?$/.test(local)) return 'purge';
    if (method !== 'POST') return 'view';
    if (/^\/entries\/[^/]+\/retry\/?$/.test(local)) return 'retry';
    if (/^\/service\/test\/?$/.test(local)) return 'webhook-test';
    if (/^\/missed\/[^/]+\/acknowledge\/?$/.test(local)) return 'acknowledge-missed';
    return 'view';
  };

  const authenticate: MiddlewareHandler<Env> = async (c, next) => {
    const action = actionOf(c.req.method, c.req.path);
    const result = await auth.check(c.req.raw, action);
    if (!result.ok) {
      if (result.status === 403) return c.html(await messagePage({ base }, 'Not allowed', 'You are signed in, but not allowed to do that.'), 403);
      if (result.challenge) c.header('WWW-Authenticate', result.challenge);
      return c.html(await (result.linkUsed ? linkUsedPage(base) : signInPage(base, auth.way)), 401);
    }
    if (result.redirectTo) {
      // The token leaves the address bar at once: the session cookie carries the sign-in from now on.
      const headers = new Headers({ Location: result.redirectTo });
      if (result.setCookie) headers.set('Set-Cookie', result.setCookie);
      return new Response(null, { status: 303, headers });
    }
    const remote = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.remoteAddress;
    c.set('actor', remote ? `${result.actor} (${remote})` : result.actor);
    c.set('session', result.session === true);
    let nonce = cookieOf(c.req.raw, CSRF_COOKIE);
    if (nonce === undefined || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) {
      nonce = auth.newNonce();
      c.set('setCsrfCookie', cookieHeader(c.req.raw, CSRF_COOKIE, nonce, base === '' ? '/' : base, auth.sessionSeconds));
    }
    c.set('csrf', auth.csrfToken(nonce));
    await next();
  };
  routes.use('*', authenticate);
  registerTenantRoutes(routes, { base, tenants, source, frameOf, page });
  registerActionRoutes(routes, { readOnly, inbox, source, auth, activity, frameOf, page, tenantOf, clientFor });

  routes.get('/', async (c) => {
    const tenant = tenantOf(c);
    const service = clientFor(c);
    const [overview, view] = await Promise.all([readOverview(source, activity, inbox, tenant), service ? readService(service, inbox, 50, tenant) : undefined]);
    return page(c, overviewPage(frameOf(c), overview, view));
  });

  const entriesQuery = (c: Context<Env>, api: boolean): EntriesQuery | string => {
    const status = c.req.query('status') || undefined;
    const event = c.req.query('event') || undefined;
    const search = c.req.query('q')?.trim() || undefined;
    const beforeAt = c.req.query('before_at');
    const beforeId = c.req.query('before_id');
    const limit = api && c.req.query('limit') !== undefined ? Number(c.req.query('limit')) : PAGE_SIZE;
    if (status !== undefined && !STATUSES.includes(status as InboxEntryStatus)) return `status must be one of ${STATUSES.join(', ')}`;
    if (event !== undefined && event.length > 100) return 'event is too long';
    if (search !== undefined && search.length > 200) return 'q is too long';
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 200) return 'limit must be a whole number from 1 to 200';
    const query: EntriesQuery = { limit };
    const tenant = tenantOf(c);
    if (tenant !== undefined) query.tenant = tenant;
    if (status) query.status = status as InboxEntryStatus;
    if (event) query.event = event;
    if (search) query.search = search;
    if (beforeAt !== undefined || beforeId !== undefined) {
      if (!/^\d{1,16}$/.test(beforeAt ?? '') || !beforeId || beforeId.length > 200) return 'before_at and before_id go together: the last entry of the previous page';
      query.before = { receivedAt: Number(beforeAt), id: beforeId };
    }
    return query;
  };

  routes.get('/entries', async (c) => {
    const query = entriesQuery(c, false);
    if (typeof query === 'string') return page(c, messagePage(frameOf(c), 'Bad filter', query), 400);
    return page(c, entriesPage(frameOf(c), query, await readEntries(source, query)));
  });

  // On a tenant's pages, that tenant's entry (a delivery id is unique per tenant).
  const entryOf = async (c: Context<Env>, id: string) => {
    const tenant = tenantOf(c);
    return inbox.entry(id, tenant === undefined ? undefined : { tenant });
  };

  routes.get('/entries/:id', async (c) => {
    const id = c.req.param('id');
    const entry = await entryOf(c, id);
    if (!entry) return page(c, messagePage(frameOf(c), 'No such entry', `The inbox holds no entry with delivery id ${id}.`), 404);
    const timeline = entry.orderId ? await readTimeline(source, entry.orderId, entry.tenant ?? null) : [];
    const listed = timeline.find((each) => each.id === entry.id);
    const shown = { ...entry, displayNumber: listed?.displayNumber ?? null, externalOrderId: listed?.externalOrderId ?? null };
    return page(c, entryPage(frameOf(c), shown, timeline, payloadForDisplay(entry.payload, showPersonalData), showPersonalData));
  });

  // The payload as a file, masked by the same allow-list as the page.
  routes.get('/entries/:id/payload.json', async (c) => {
    const id = c.req.param('id');
    const entry = await entryOf(c, id);
    if (!entry) return page(c, messagePage(frameOf(c), 'No such entry', `The inbox holds no entry with delivery id ${id}.`), 404);
    const view = payloadView(entry.payload, showPersonalData);
    const name = `entry-${id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}-payload`;
    const [body, type, extension] = view.kind === 'json' ? [JSON.stringify(view.value, null, 2), 'application/json', 'json'] : [payloadForDisplay(entry.payload, showPersonalData), 'text/plain', 'txt'];
    return new Response(body, { headers: { 'Content-Type': `${type}; charset=utf-8`, 'Content-Disposition': `attachment; filename="${name}.${extension}"` } });
  });

  routes.get('/service', async (c) => {
    const service = clientFor(c);
    if (!service && tenants) return page(c, messagePage(frameOf(c), 'Pick a tenant', "Each merchant has its own key and endpoints: choose a tenant (the Tenants page, or the filter above) to see its key's health, its endpoints and their deliveries."), 404);
    if (!service) return page(c, messagePage(frameOf(c), 'No service panel', 'This dashboard was created without a client.'), 404);
    return page(c, servicePage(frameOf(c), await readService(service, inbox, 100, tenantOf(c))));
  });

  routes.get('/sync', async (c) => {
    if (!sync) return page(c, messagePage(frameOf(c), 'No sync panel', 'This dashboard was created without a sync.'), 404);
    try {
      return page(c, syncPage(frameOf(c), await readSyncRuns(sync, 20)));
    } catch (error) {
      return page(c, syncPage(frameOf(c), undefined, `The sync history could not be read: ${describeError(error)}`), 500);
    }
  });

  routes.get('/sync/runs/:runId/errors.csv', async (c) => {
    if (!sync) return page(c, messagePage(frameOf(c), 'No sync panel', 'This dashboard was created without a sync.'), 404);
    const runId = c.req.param('runId');
    const rows = sync.runErrors(runId)[Symbol.asyncIterator]();
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('index,external_id,store_id,code,message\r\n'));
      },
      async pull(controller) {
        // A few hundred rows per pull: the download streams, whatever the run's size.
        let lines = '';
        for (let n = 0; n < 500; n += 1) {
          const next = await rows.next();
          if (next.done) {
            if (lines) controller.enqueue(encoder.encode(lines));
            controller.close();
            return;
          }
          const row = next.value;
          lines += `${[row.index, row.external_id, row.store_id ?? '', row.code, row.message].map(csvField).join(',')}\r\n`;
        }
        controller.enqueue(encoder.encode(lines));
      },
      async cancel() {
        await rows.return?.();
      },
    });
    const name = `sync-run-${runId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}-rejected.csv`;
    return new Response(stream, { headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${name}"` } });
  });

  routes.get('/api/stats', async (c) => {
    const overview = await readOverview(source, activity, inbox, tenantOf(c));
    return c.json({ ...overview.stats, workers: overview.workers, activity: overview.activity, generatedAt: new Date(overview.now).toISOString() });
  });

  routes.get('/api/entries/:id', async (c) => {
    const entry = await entryOf(c, c.req.param('id'));
    if (!entry) return c.json({ error: 'no such entry' }, 404);
    const { payload, ...fields } = entry;
    // `payload` is what the entry page shows: { kind: 'json', value } masked unless showPersonalData.
    return c.json({ entry: fields, payload: payloadView(payload, showPersonalData) });
  });

  routes.get('/api/entries', async (c) => {
    const query = entriesQuery(c, true);
    if (typeof query === 'string') return c.json({ error: query }, 400);
    const { entries, next } = await readEntries(source, query);
    // The cursor under the names the route reads, so a script passes it back as it is.
    return c.json({ entries, next: next && { before_at: next.receivedAt, before_id: next.id } });
  });

  app.notFound(async (c) => c.html(await messagePage({ base }, 'Not found', 'There is no such page in this dashboard.'), 404));
  app.onError(async (error, c) => {
    if (process.env.DASHBOARD_DEBUG) console.error(error);
    if (error instanceof HTTPException) {
      const status = error.status;
      if (status === 403) return c.html(await messagePage({ base }, 'Not allowed', "This request did not come from the dashboard's own page."), 403);
      return error.getResponse();
    }
    // Never the error's message: a driver's may quote a query or a value.
    return c.html(await messagePage({ base }, 'Something failed', `The dashboard could not answer (${error instanceof Error ? error.name : 'error'}). Try again; if it persists, check the store.`), 500);
  });

  // A router that strips its mount path (Hono's mount(), Express's url) hands over `/entries` for
  // `<basePath>/entries`: put basePath back, so that both kinds of mounting work. A tenant's page
  // (`<basePath>/t/<tenant>/entries`) reaches the routes as `<basePath>/entries` with the tenant beside it.
  const underBase = (path: string) => base === '' || path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`);
  const dispatch = (request: Request, env: object = {}) => {
    const url = new URL(request.url);
    const scope = scopeOf(base, url.pathname);
    if (!scope) return app.fetch(request, env);
    url.pathname = scope.path;
    return app.fetch(withPath(request, url), { ...env, tenant: scope.tenant });
  };
  const listener = getRequestListener((request, env) => dispatch(request, env));
  return {
    async fetch(request: Request) {
      const url = new URL(request.url);
      if (underBase(url.pathname)) return dispatch(request);
      url.pathname = `${base}${url.pathname}`;
      return dispatch(withPath(request, url));
    },
    node(request, response) {
      // Express strips its mount path from `url`; `originalUrl` keeps it.
      const express = request as IncomingMessage & { originalUrl?: unknown; body?: unknown; rawBody?: unknown };
      if (typeof express.originalUrl === 'string') express.url = express.originalUrl;
      if (express.url !== undefined && !underBase(express.url)) express.url = `${base}${express.url.startsWith('/') ? '' : '/'}${express.url}`;
      // A body parser already read the form (express.urlencoded()): hand its fields on.
      if (express.complete && express.readableEnded && express.rawBody === undefined && typeof express.body === 'object' && express.body !== null) {
        express.rawBody = Buffer.from(new URLSearchParams(express.body as Record<string, string>).toString());
      }
      void listener(request, response);
    },
  };
}
