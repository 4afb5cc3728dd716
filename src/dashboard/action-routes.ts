// The routes that change something: retry one entry, retry every dead entry and purge dead entries
// (each of the last two after a page that states what it touches, and only with the count that
// page stated), send a test delivery, acknowledge a missed delivery, sign out. Every POST passes the same-origin check and the
// CSRF token; the actions (not signing out) are refused in read-only mode and are recorded.
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { Inbox } from '../inbox/create-inbox.ts';
import type { createAuth } from './auth.ts';
import { CSRF_COOKIE, cookieOf, sameSecret } from './auth.ts';
import { confirmPurgePage, confirmRetryDeadPage } from './confirm-pages.ts';
import { describeError, type createActivityReader, type DashboardClient, type DashboardStore } from './data.ts';
import { messagePage, type PageFrame } from './pages.ts';
import { sameOriginVerdict } from './same-origin.ts';
import { signedOutPage } from './sign-in-pages.ts';

const DAY = 86_400_000;
/** The purge confirmation lists this many entries (and counts all of them). */
const PURGE_LISTED = 500;

export type DashboardEnv = { Variables: { actor: string; csrf: string; setCsrfCookie?: string; session?: boolean; tenant?: string } };
type Page = ReturnType<typeof messagePage>;

export interface ActionContext {
  readOnly: boolean;
  inbox: Inbox;
  source: DashboardStore;
  /** The tenant a page (and so its forms) is scoped to; `undefined`: every tenant. */
  tenantOf(c: Context<DashboardEnv>): string | undefined;
  /** The client of the page's service panel: the tenant's, or the dashboard's. */
  clientFor(c: Context<DashboardEnv>): DashboardClient | undefined;
  auth: ReturnType<typeof createAuth>;
  activity: ReturnType<typeof createActivityReader>;
  frameOf(c: Context<DashboardEnv>): PageFrame;
  page(c: Context<DashboardEnv>, body: Page, status?: 200 | 400 | 403 | 404 | 409): Promise<Response>;
}

/** `days` of a purge: a whole number from 1; anything else is refused, with why. */
function daysOf(value: unknown): number | string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (!/^\d{1,5}$/.test(text)) return `Give a whole number of days, 1 or more (got ${JSON.stringify(text.slice(0, 20))}).`;
  const days = Number(text);
  return days >= 1 ? days : 'Give 1 day or more: 0 would delete entries that died a moment ago, before anyone read why.';
}

export function registerActionRoutes(routes: Hono<DashboardEnv>, context: ActionContext): void {
  const { readOnly, inbox, source, auth, activity, frameOf, page, tenantOf, clientFor } = context;
  const scoped = (c: Context<DashboardEnv>) => {
    const tenant = tenantOf(c);
    return tenant === undefined ? undefined : { tenant };
  };
  const refuseReadOnly = (c: Context<DashboardEnv>) => page(c, messagePage(frameOf(c), 'Read-only', 'This dashboard is read-only: actions are turned off.'), 403);

  // The dashboard's own form, from its own page: same origin (Origin and Sec-Fetch-Site), a form
  // body, and the CSRF token that fits this browser's CSRF cookie.
  const ownForm: MiddlewareHandler<DashboardEnv> = async (c, next) => {
    const origin = sameOriginVerdict(c.req.raw);
    if (!origin.ok) return page(c, messagePage(frameOf(c), 'Not allowed', `This request did not come from the dashboard's own page: ${origin.why}.`), 403);
    if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header('content-type') ?? '')) {
      return page(c, messagePage(frameOf(c), 'Not allowed', "Actions are sent by the dashboard's own forms."), 403);
    }
    const form = await c.req.parseBody();
    const nonce = cookieOf(c.req.raw, CSRF_COOKIE);
    const token = typeof form.csrf === 'string' ? form.csrf : '';
    if (nonce === undefined || token === '' || !sameSecret(token, auth.csrfToken(nonce))) {
      return page(c, messagePage(frameOf(c), 'The form expired', 'Reload the page and try again.'), 403);
    }
    await next();
  };
  const guardAction: MiddlewareHandler<DashboardEnv> = async (c, next) => (readOnly ? refuseReadOnly(c) : ownForm(c, next));
  const record = (c: Context<DashboardEnv>, action: string, detail: string) => {
    // An action may change the counts of hours already over.
    activity.invalidate();
    const tenant = tenantOf(c);
    return source.store.recordAction!({ at: source.clock.now(), actor: c.get('actor'), action, detail: tenant === undefined ? detail : `tenant ${tenant}: ${detail}` });
  };
  // Back to the page's own scope: a tenant's action lands on that tenant's pages.
  const redirect = (c: Context<DashboardEnv>, path: string) => new Response(null, { status: 303, headers: { Location: `${frameOf(c).base}${path}` } });

  routes.post('/entries/:id/retry', guardAction, async (c) => {
    const id = c.req.param('id');
    const retried = await inbox.retry(id, scoped(c));
    await record(c, 'retry', retried ? `delivery ${id}: back to pending` : `delivery ${id}: not retried (not dead or done)`);
    return redirect(c, `/entries/${encodeURIComponent(id)}?done=${retried ? 'retried' : 'not-retried'}`);
  });

  routes.get('/retry-dead', async (c) => {
    // Read-only: no action, not even its confirmation form.
    if (readOnly) return refuseReadOnly(c);
    await source.ready();
    const stats = await source.store.stats(source.clock.now(), scoped(c));
    return page(c, confirmRetryDeadPage(frameOf(c), stats.dead));
  });

  routes.post('/retry-dead', guardAction, async (c) => {
    const form = await c.req.parseBody();
    const stated = typeof form.expected === 'string' && /^\d{1,12}$/.test(form.expected) ? form.expected : '?';
    // Only after a page that stated the count, and only that count: more entries died (or some
    // were retried) since, or no page stated one, and the confirmation is asked again.
    const dead = (await source.store.stats(source.clock.now(), scoped(c))).dead;
    if (stated === '?' || Number(stated) !== dead) {
      const flash = stated === '?' ? `Confirm: ${dead} dead now.` : `The count changed since that page: ${dead} dead now.`;
      return page(c, confirmRetryDeadPage({ ...frameOf(c), flash }, dead), 409);
    }
    const count = await inbox.retryDead(scoped(c));
    await record(c, 'retry-dead', `${count} dead ${count === 1 ? 'entry' : 'entries'} back to pending (the confirmation page stated ${stated})`);
    return redirect(c, `/?done=retry-dead&n=${count}`);
  });

  // A purge is asked for with GET (its confirmation page, with the time it counts from) and done
  // by POST with that time and the count the page stated. The time is fixed by the page: an entry
  // that dies meanwhile finishes after it, so the purge deletes at most what the page listed.
  const purgeConfirmation = async (c: Context<DashboardEnv>, days: number, flash?: string, status: 200 | 409 = 200) => {
    await source.ready();
    const before = source.clock.now() - days * DAY;
    const preview = await source.store.purgePreview!({ status: 'dead', finishedBefore: before, limit: PURGE_LISTED, ...scoped(c) });
    return page(c, confirmPurgePage({ ...frameOf(c), flash }, { days, before, preview }), status);
  };

  routes.get('/purge', async (c) => {
    if (readOnly) return refuseReadOnly(c);
    const days = daysOf(c.req.query('days'));
    if (typeof days === 'string') return page(c, messagePage(frameOf(c), 'Bad number of days', days), 400);
    return purgeConfirmation(c, days);
  });

  routes.post('/purge', guardAction, async (c) => {
    const form = await c.req.parseBody();
    const days = daysOf(form.days);
    if (typeof days === 'string') return page(c, messagePage(frameOf(c), 'Bad number of days', `${days} Nothing was deleted.`), 400);
    const before = typeof form.before === 'string' && /^\d{1,16}$/.test(form.before) ? Number(form.before) : NaN;
    const expected = typeof form.expected === 'string' && /^\d{1,12}$/.test(form.expected) ? Number(form.expected) : NaN;
    await source.ready();
    if (Number.isNaN(before) || Number.isNaN(expected) || before > source.clock.now() - days * DAY) {
      return purgeConfirmation(c, days, 'Nothing was deleted: no confirmation page stated what to delete. This one does.', 409);
    }
    const preview = await source.store.purgePreview!({ status: 'dead', finishedBefore: before, limit: 20, ...scoped(c) });
    if (preview.count !== expected) {
      const flash = `Nothing was deleted: the confirmation page stated ${expected}, and ${preview.count} dead ${preview.count === 1 ? 'entry is' : 'entries are'} that old now (entries were retried, purged or died since). Here is what a purge deletes now.`;
      return purgeConfirmation(c, days, flash, 409);
    }
    const count = await source.store.purge({ status: 'dead', finishedBefore: before, what: 'entry', ...scoped(c) });
    const orders = [...new Set(preview.entries.map((entry) => (entry.displayNumber ? `#${entry.displayNumber}` : entry.orderId)).filter(Boolean))];
    await record(
      c,
      'purge',
      `${count} dead ${count === 1 ? 'entry' : 'entries'} older than ${days} ${days === 1 ? 'day' : 'days'} (finished before ${new Date(before).toISOString()}) deleted; the confirmation page stated ${expected}` +
        (orders.length > 0 ? `; orders ${orders.join(', ')}${preview.count > preview.entries.length ? ', …' : ''}` : ''),
    );
    return redirect(c, `/?done=purged&n=${count}`);
  });

  routes.post('/service/test', guardAction, async (c) => {
    const client = clientFor(c);
    if (!client) return page(c, messagePage(frameOf(c), 'No service panel', 'This dashboard was created without a client.'), 404);
    const form = await c.req.parseBody();
    const endpoint = typeof form.endpoint === 'string' ? form.endpoint.slice(0, 200) : '';
    try {
      const result = await client.webhooks.test(endpoint, { signal: AbortSignal.timeout(10_000) });
      await record(c, 'webhook-test', `endpoint ${endpoint}: test delivery ${result.delivery_id}`);
      return redirect(c, '/service?done=tested');
    } catch (error) {
      await record(c, 'webhook-test', `endpoint ${endpoint}: failed (${describeError(error)})`);
      return redirect(c, '/service?done=test-failed');
    }
  });

  // The inbox keeps who acknowledged (`by`); the action log, the dashboard's own, is written here.
  routes.post('/missed/:deliveryId/acknowledge', guardAction, async (c) => {
    const deliveryId = c.req.param('deliveryId');
    const acknowledged = await inbox.acknowledgeMissed(deliveryId, { by: c.get('actor'), ...scoped(c) });
    await record(c, 'acknowledge-missed', acknowledged > 0 ? `missed delivery ${deliveryId}: acknowledged` : `missed delivery ${deliveryId}: not acknowledged (no open miss has that id)`);
    return redirect(c, `/?done=${acknowledged > 0 ? 'acknowledged' : 'not-acknowledged'}#missed-title`);
  });

  // Signing out is no action on the inbox: read-only dashboards have it too.
  routes.post('/sign-out', ownForm, async (c) => {
    c.header('Set-Cookie', auth.signOut(c.req.raw), { append: true });
    return c.html(await signedOutPage(frameOf(c).root ?? frameOf(c).base, auth.way), 200);
  });
}
