// The pages, as hono/html templates: every value interpolated is escaped, so a delivery whose
// fields carry HTML or script shows it as text. No script anywhere; the stylesheet is its own route.
import { html } from 'hono/html';
import type { InboxAttention } from '../inbox/health.ts';
import type { InboxAction, InboxEntry, InboxEntryStatus, MissedRecord } from '../inbox/store.ts';
import { activityChart } from './chart.ts';
import type { DashboardSyncRun, EntriesPage, EntriesQuery, Overview, ServiceView } from './data.ts';
import { STATUSES } from './data.ts';
import { tenantBase } from './tenant-scope.ts';

type Html = ReturnType<typeof html>;
export type Section = 'overview' | 'entries' | 'service' | 'sync' | 'tenants';

export interface PageFrame {
  /** Where the page's links start: the dashboard's base path, or a tenant's (`<base>/t/<tenant>`). */
  base: string;
  /** The dashboard's base path, whatever the tenant (default: `base`). */
  root?: string;
  /** With `tenants`: the tenant the page shows, or none (every tenant). */
  tenant?: string;
  /** Given `tenants`: the Tenants page and the tenant filter are on every page. */
  hasTenants?: boolean;
  readOnly: boolean;
  hasClient: boolean;
  hasSync: boolean;
  /** The CSRF form token, when actions are shown. */
  csrf?: string;
  flash?: string;
  /** Signed in with a session cookie: the header has a sign-out button. */
  session?: boolean;
}

// The spec's events and the two it plans (stored as unknown until an SDK version knows them).
export const KNOWN_EVENTS = ['order.created', 'order.status_changed', 'webhook.test', 'catalog.product_updated', 'stock.changed'];

const pad = (value: number) => String(value).padStart(2, '0');
export function formatTime(at: number | null | undefined): string {
  if (at === null || at === undefined || !Number.isFinite(at)) return '—';
  const date = new Date(at);
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} UTC`;
}
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days ${hours % 24} h`;
}
const time = (at: number | null | undefined) => (at === null || at === undefined ? html`—` : html`<time datetime="${new Date(at).toISOString()}">${formatTime(at)}</time>`);
/** A time the service sent as ISO text, shown like the inbox's; as sent when it does not parse. */
const serviceTime = (value: string | null) => {
  if (value === null) return '—';
  const at = Date.parse(value);
  return Number.isNaN(at) ? value : time(at);
};
const statusText = (status: string) => html`<span class="status-${status}">${status}</span>`;

/** The HTML document every page shares: its head (the one stylesheet), a header bar, the main part. */
function documentOf(base: string, options: { title: string; refreshSeconds?: number }, header: Html, body: Html | string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${options.refreshSeconds ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}">` : ''}
<title>${options.title} · integration-sdk dashboard</title>
<link rel="stylesheet" href="${base}/assets/dashboard.css">
</head>
<body>
${header}
<main id="main">
${body}
</main>
</body>
</html>`;
}

export function layout(frame: PageFrame, options: { title: string; section?: Section; refreshSeconds?: number }, body: Html | string): Html {
  const link = (section: Section, path: string, label: string) =>
    html`<li><a href="${frame.base}${path}"${options.section === section ? html` aria-current="page"` : ''}>${label}</a></li>`;
  const header = html`<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="${frame.base}/">Integration inbox</a>
  <nav aria-label="Dashboard"><ul>
    ${link('overview', '/', 'Overview')}
    ${link('entries', '/entries', 'Entries')}
    ${frame.hasClient || frame.hasTenants ? link('service', '/service', 'Service') : ''}
    ${frame.hasSync ? link('sync', '/sync', 'Sync') : ''}
    ${frame.hasTenants ? html`<li><a href="${frame.root ?? frame.base}/tenants"${options.section === 'tenants' ? html` aria-current="page"` : ''}>Tenants</a></li>` : ''}
  </ul></nav>
  ${frame.hasTenants ? tenantFilter(frame) : ''}
  <span class="mode">${frame.readOnly ? 'Read-only' : 'Actions enabled'}</span>
  ${frame.session ? html`<form method="post" action="${frame.base}/sign-out" class="sign-out">${csrfField(frame)}<button type="submit">Sign out</button></form>` : ''}
</header>`;
  return documentOf(frame.base, options, header, html`${frame.flash ? html`<p class="flash" role="status">${frame.flash}</p>` : ''}
${body}`);
}

/** Every page's tenant filter: a tenant id (its pages), or none (every tenant's). */
function tenantFilter(frame: PageFrame): Html {
  const root = frame.root ?? frame.base;
  return html`<form method="get" action="${root}/tenant" class="tenant-filter" role="search" aria-label="Tenant">
    <label for="tenant-filter">Tenant</label>
    <input id="tenant-filter" name="tenant" value="${frame.tenant ?? ''}" placeholder="all tenants" size="14" autocomplete="off" spellcheck="false">
    <button type="submit">Show</button>
    ${frame.tenant ? html`<a href="${root}/">All tenants</a>` : ''}
  </form>`;
}

export function csrfField(frame: PageFrame): Html {
  return html`<input type="hidden" name="csrf" value="${frame.csrf ?? ''}">`;
}

/** One finding of the inbox's rules (src/inbox/health.ts, shared with `doctor --store`), with what to do. */
function inboxItem(item: InboxAttention, now: number, base: string): Html {
  switch (item.kind) {
    case 'no-worker': {
      const { waiting, oldestPendingAgeMs, lastClaimAt } = item.noWorker;
      return html`<li><strong>No worker is running</strong>: ${waiting} ${waiting === 1 ? 'entry waits' : 'entries wait'}, the oldest for ${formatAge(oldestPendingAgeMs)},
        and no worker has claimed work ${lastClaimAt === null ? 'yet' : html`since ${formatAge(now - lastClaimAt)} ago`}. Start the process that calls <code>inbox.startWorker()</code>, or look at its logs.</li>`;
    }
    case 'missed':
      return html`<li><strong>${item.missed.length} ${item.missed.length === 1 ? 'delivery' : 'deliveries'} the service gave up on (or is still retrying) never reached the inbox</strong>.
        They are listed under <a href="${base}/#missed-title">Missed deliveries</a>: fix the receiver, run <code>inbox.reconcile({ client })</code> (or <code>integration-sdk inbox reconcile</code>) to read those orders back, and acknowledge each one once dealt with.</li>`;
    case 'dead':
      return html`<li><strong>${item.dead} ${item.dead === 1 ? 'entry is' : 'entries are'} dead</strong>: their handler failed every attempt.
        Read the last error in <a href="${base}/entries?status=dead">the dead entries</a>, fix the cause in the handler or the ERP, then retry them.</li>`;
    case 'pending-old':
      return html`<li><strong>Pending work is getting old</strong>: the oldest entry has waited ${formatAge(item.oldestPendingAgeMs)}.
        Workers are behind, or held back by a failing earlier event of the same order: read the errors of the <a href="${base}/entries?status=pending">pending entries</a>.</li>`;
  }
}

/** What needs attention, each with what to do; empty when nothing does. */
export function attentionItems(overview: Overview, service: ServiceView | undefined, base: string): Html[] {
  const items = overview.attention.map((item) => inboxItem(item, overview.now, base));
  for (const each of service?.endpoints ?? []) {
    if (each.endpoint.consecutive_failures > 0) {
      items.push(html`<li><strong>The endpoint ${each.endpoint.url} failed its last ${each.endpoint.consecutive_failures} ${each.endpoint.consecutive_failures === 1 ? 'delivery' : 'deliveries'}</strong>:
        the service could not get a 2xx from the receiver. Check that the receiver is up and reachable over HTTPS and that its secret is right, then send a test delivery from <a href="${base}/service">Service</a>.</li>`);
    }
  }
  if (service?.healthError) {
    items.push(html`<li><strong>The service cannot be reached with this key</strong>: ${service.healthError}. Check the key, the base URL and the network.</li>`);
  }
  return items;
}

/** The open missed deliveries, each with its acknowledge button (not read-only). */
function missedSection(frame: PageFrame, missed: MissedRecord[], total: number): Html | string {
  if (total === 0) return '';
  return html`<section aria-labelledby="missed-title">
  <h2 id="missed-title">Missed deliveries</h2>
  <p class="muted">Deliveries of the inbox's own endpoints that the service lists as dead or retrying and that never arrived, as the last reconcile found them.
    One stays here until it arrives, a reconcile reads its order back, or someone acknowledges it (for a missed <code>order.created</code>, once the order was found by hand).${total > missed.length ? ` The oldest ${missed.length} of ${total}.` : ''}</p>
  <div class="table-wrap"><table id="missed">
  <caption class="visually-hidden">Missed deliveries, oldest first</caption>
  <thead><tr><th scope="col">Created</th><th scope="col">Delivery id</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last error</th>${frame.readOnly ? '' : html`<th scope="col"><span class="visually-hidden">Action</span></th>`}</tr></thead>
  <tbody>${missed.map(
    (each) => html`<tr><td>${serviceTime(each.createdAt)}</td><td><code>${each.deliveryId}</code></td><td>${each.event}</td><td>${each.status}</td><td class="num">${each.attemptCount}</td><td class="error-text">${each.lastError ?? ''}</td>
      ${frame.readOnly
        ? ''
        : html`<td><form method="post" action="${frame.base}/missed/${encodeURIComponent(each.deliveryId)}/acknowledge" class="inline">${csrfField(frame)}<button type="submit" aria-label="Acknowledge missed delivery ${each.deliveryId}">Acknowledge</button></form></td>`}</tr>`,
  )}</tbody></table></div>
</section>`;
}

function actionLog(actions: InboxAction[]): Html {
  if (actions.length === 0) return html`<p class="muted">No action yet.</p>`;
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">Operators' actions, newest first</caption>
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead>
  <tbody>${actions.map((action) => html`<tr><td>${time(action.at)}</td><td>${action.actor}</td><td>${action.action}</td><td>${action.detail}</td></tr>`)}</tbody>
</table></div>`;
}

export function overviewPage(frame: PageFrame, overview: Overview, service: ServiceView | undefined): Html {
  const { stats, workers, activity, now } = overview;
  const items = attentionItems(overview, service, frame.base);
  const count = (status: InboxEntryStatus) =>
    html`<div><dt>${status}</dt><dd><a href="${frame.base}/entries?status=${status}" class="status-${status}" aria-label="${stats[status]} ${status} entries">${stats[status]}</a></dd></div>`;
  const body = html`<h1>Overview${frame.tenant ? html` of tenant ${frame.tenant}` : ''}</h1>
<section aria-labelledby="attention-title" class="attention${items.length === 0 ? ' calm' : ''}">
  <h2 id="attention-title">${items.length === 0 ? 'Nothing needs attention' : 'Needs attention'}</h2>
  ${items.length === 0 ? html`<p>Every entry is done or on its way, and ${workers.alive > 0 ? 'a worker is alive' : 'nothing waits for a worker'}.</p>` : html`<ul>${items}</ul>`}
</section>

<section aria-labelledby="counts-title">
  <h2 id="counts-title">Entries by status</h2>
  <dl class="cards" id="counts">
    <div><dt>received</dt><dd><a href="${frame.base}/entries" aria-label="${stats.received} entries held">${stats.received}</a></dd></div>
    ${STATUSES.map(count)}
  </dl>
  <dl class="facts">
    <dt>Oldest pending</dt><dd id="oldest-pending">${stats.oldestPendingAgeMs > 0 ? formatAge(stats.oldestPendingAgeMs) : 'nothing pending'}</dd>
    <dt>Workers</dt><dd id="workers">${workers.claimedLastMinute ? 'a worker claimed work in the last minute' : 'no worker claimed work in the last minute'};
      ${workers.alive} alive (seen in the last minute)${workers.lastClaimAt !== null ? html`; last claim ${formatAge(now - workers.lastClaimAt)} ago` : ''}</dd>
  </dl>
</section>

<section aria-labelledby="activity-title">
  <h2 id="activity-title">Activity</h2>
  ${frame.tenant ? html`<p class="muted">Of every tenant: the store counts activity per hour for the whole inbox.</p>` : ''}
  <h3>Last 24 hours, per hour (UTC)</h3>
  ${activityChart({ id: 'hourly', title: 'Entries received, done and dead per hour over the last 24 hours', buckets: activity.hourly, label: (start, index) => (index % 4 === 1 ? `${pad(new Date(start).getUTCHours())}:00` : null) })}
  <h3>Last 7 days, per day (UTC)</h3>
  ${activityChart({ id: 'daily', title: 'Entries received, done and dead per day over the last 7 days', buckets: activity.daily, label: (start) => new Date(start).toISOString().slice(5, 10) })}
  <details><summary>The numbers</summary>
  <div class="two">
    ${[['Per hour', activity.hourly, (start: number) => `${pad(new Date(start).getUTCHours())}:00`] as const, ['Per day', activity.daily, (start: number) => new Date(start).toISOString().slice(0, 10)] as const].map(
      ([caption, buckets, label]) => html`<div class="table-wrap"><table><caption>${caption}</caption>
      <thead><tr><th scope="col">From</th><th scope="col" class="num">Received</th><th scope="col" class="num">Done</th><th scope="col" class="num">Dead</th></tr></thead>
      <tbody>${buckets.map((bucket) => html`<tr><td>${label(bucket.start)}</td><td class="num">${bucket.received}</td><td class="num">${bucket.done}</td><td class="num">${bucket.dead}</td></tr>`)}</tbody></table></div>`,
    )}
  </div></details>
</section>

${missedSection(frame, overview.missed, overview.attention.find((item) => item.kind === 'missed')?.missed.length ?? 0)}

${service ? serviceSummary(frame, service) : ''}

${frame.readOnly ? '' : html`<section aria-labelledby="actions-title">
  <h2 id="actions-title">Actions</h2>
  <div class="actions">
    <p><a href="${frame.base}/retry-dead">Retry all dead entries…</a> <span class="muted">(asks first)</span></p>
    <form method="get" action="${frame.base}/purge" class="inline">
      <label for="purge-days">Delete dead entries older than (days)
        <input id="purge-days" name="days" type="number" min="1" step="1" value="30" required inputmode="numeric"></label>
      <button type="submit" class="danger">Purge dead entries…</button> <span class="muted">(asks first)</span>
    </form>
  </div>
</section>`}

<section aria-labelledby="log-title">
  <h2 id="log-title">Action log</h2>
  ${actionLog(overview.actions)}
</section>`;
  // No automatic refresh here: it would wipe the purge form while someone fills it in.
  return layout(frame, { title: 'Overview', section: 'overview' }, body);
}

function serviceSummary(frame: PageFrame, service: ServiceView, heading = 'Service'): Html {
  return html`<section aria-labelledby="service-title">
  <h2 id="service-title">${heading}</h2>
  ${service.health
    ? html`<dl class="facts">
      <dt>Key health</dt><dd>${service.health.status}</dd>
      <dt>Merchant</dt><dd>${service.health.merchant_id}</dd>
      <dt>Scopes</dt><dd>${service.health.scopes.join(', ') || '—'}</dd>
      <dt>Stores</dt><dd>${service.health.store_ids.length === 0 ? 'every store of the merchant' : service.health.store_ids.join(', ')}</dd>
    </dl>`
    : html`<p class="error">Health: ${service.healthError ?? 'unknown'}</p>`}
  ${service.endpoints
    ? html`<h3>Webhook endpoints</h3>${endpointsTable(service)}`
    : html`<p class="error">Webhook endpoints: ${service.endpointsError ?? 'unknown'}</p>`}
</section>`;
}

function endpointsTable(service: ServiceView): Html {
  if (!service.endpoints || service.endpoints.length === 0) return html`<p class="muted">No webhook endpoint is registered.</p>`;
  return html`<div class="table-wrap"><table>
  <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col" class="num">Consecutive failures</th><th scope="col" class="num">Missed</th></tr></thead>
  <tbody>${service.endpoints.map(
    (each) => html`<tr><td>${each.endpoint.url}</td><td>${each.endpoint.events.join(', ')}</td>
      <td class="num${each.endpoint.consecutive_failures > 0 ? ' status-dead' : ''}">${each.endpoint.consecutive_failures}</td>
      <td class="num">${each.deliveries.filter((delivery) => delivery.missed).length}</td></tr>`,
  )}</tbody></table></div>`;
}

/** Where an entry's own page is: within its tenant's pages, whichever page lists it. */
function entryBase(frame: PageFrame, entry: InboxEntry): string {
  return entry.tenant && frame.hasTenants && !frame.tenant ? tenantBase(frame.root ?? frame.base, entry.tenant) : frame.base;
}

export function entriesTable(frame: PageFrame, entries: InboxEntry[], caption: string): Html {
  const tenantColumn = frame.hasTenants === true && !frame.tenant;
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr><th scope="col">Received</th>${tenantColumn ? html`<th scope="col">Tenant</th>` : ''}<th scope="col">Event</th><th scope="col">Order</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last error</th></tr></thead>
  <tbody>${entries.map(
    (entry) => html`<tr>
      <td><a href="${entryBase(frame, entry)}/entries/${encodeURIComponent(entry.id)}" aria-label="Entry ${entry.id}, received ${formatTime(entry.receivedAt)}">${time(entry.receivedAt)}</a></td>
      ${tenantColumn ? html`<td>${entry.tenant ?? '—'}</td>` : ''}
      <td>${entry.event}${entry.known ? '' : html` <span class="muted">(unknown)</span>`}</td>
      <td>${entry.displayNumber ? html`#${entry.displayNumber}` : entry.orderId ? html`<span class="muted">${entry.orderId.slice(0, 8)}…</span>` : '—'}</td>
      <td>${statusText(entry.status)}${entry.copyOf ? html` <span class="muted" title="The same event through the other endpoint of a secret rotation: stored for the audit, never run">(copy)</span>` : ''}</td>
      <td class="num">${entry.attempts}</td>
      <td class="error-text">${entry.lastError ?? ''}</td>
    </tr>`,
  )}</tbody></table></div>`;
}

export function entriesPage(frame: PageFrame, query: EntriesQuery, page: EntriesPage): Html {
  const params = (extra: Record<string, string>) => {
    const search = new URLSearchParams();
    if (query.status) search.set('status', query.status);
    if (query.event) search.set('event', query.event);
    if (query.search) search.set('q', query.search);
    for (const [key, value] of Object.entries(extra)) search.set(key, value);
    return search.toString();
  };
  const events = query.event && !KNOWN_EVENTS.includes(query.event) ? [...KNOWN_EVENTS, query.event] : KNOWN_EVENTS;
  const body = html`<h1>Entries${frame.tenant ? html` of tenant ${frame.tenant}` : ''}</h1>
<form method="get" action="${frame.base}/entries" class="filters" role="search" aria-label="Filter entries">
  <label for="f-status">Status
    <select id="f-status" name="status"><option value="">any</option>${STATUSES.map((status) => html`<option value="${status}"${query.status === status ? html` selected` : ''}>${status}</option>`)}</select></label>
  <label for="f-event">Event
    <select id="f-event" name="event"><option value="">any</option>${events.map((event) => html`<option value="${event}"${query.event === event ? html` selected` : ''}>${event}</option>`)}</select></label>
  <label for="f-q">Delivery id, order id, order number or external order id
    <input id="f-q" name="q" type="search" value="${query.search ?? ''}" autocomplete="off" size="32"></label>
  <input type="submit" value="Show">
  ${query.status || query.event || query.search ? html`<a href="${frame.base}/entries">Clear</a>` : ''}
</form>
${page.entries.length === 0 ? html`<p>No entry matches.</p>` : entriesTable(frame, page.entries, 'Entries, newest first')}
<nav class="pager" aria-label="Pages">
  ${query.before ? html`<a href="${frame.base}/entries?${params({})}">Newest</a>` : ''}
  ${page.next ? html`<a href="${frame.base}/entries?${params({ before_at: String(page.next.receivedAt), before_id: page.next.id })}" rel="next">Older entries</a>` : ''}
</nav>`;
  return layout(frame, { title: 'Entries', section: 'entries' }, body);
}

export function entryPage(frame: PageFrame, entry: InboxEntry, timeline: InboxEntry[], payloadText: string, showPersonalData: boolean): Html {
  const retryable = entry.status === 'dead' || entry.status === 'done';
  const others = timeline.filter((each) => each.id !== entry.id);
  const body = html`<h1>Entry <code>${entry.id}</code></h1>
<dl class="facts" id="entry-facts">
  <dt>Event</dt><dd>${entry.event}${entry.known ? '' : ' (unknown to this SDK version)'}</dd>
  ${entry.tenant ? html`<dt>Tenant</dt><dd>${entry.tenant}</dd>` : ''}
  <dt>Status</dt><dd id="entry-status">${statusText(entry.status)}${entry.copyOf
    ? html` — a copy of <a href="${frame.base}/entries/${encodeURIComponent(entry.copyOf)}"><code>${entry.copyOf}</code></a>, the same event through the other endpoint of a secret rotation: kept for the audit, never run`
    : ''}</dd>
  <dt>Order</dt><dd>${entry.displayNumber ? html`#${entry.displayNumber}` : '—'}${entry.orderId ? html` <span class="muted">(${entry.orderId})</span>` : ''}</dd>
  <dt>External order id</dt><dd>${entry.externalOrderId ?? '—'}</dd>
  <dt>Attempts</dt><dd>${entry.attempts}</dd>
  <dt>Last error</dt><dd>${entry.lastError ?? '—'}</dd>
  <dt>Event time (ts)</dt><dd>${time(entry.ts * 1000)}</dd>
  <dt>Received</dt><dd>${time(entry.receivedAt)}</dd>
  <dt>Next attempt</dt><dd>${entry.status === 'pending' ? time(entry.nextAttemptAt) : '—'}</dd>
  <dt>Finished</dt><dd>${time(entry.finishedAt)}</dd>
</dl>
${!frame.readOnly && retryable
    ? html`<form method="post" action="${frame.base}/entries/${encodeURIComponent(entry.id)}/retry" class="inline">${csrfField(frame)}<button type="submit">Retry this entry</button></form>`
    : ''}
${entry.orderId
    ? html`<section aria-labelledby="timeline-title"><h2 id="timeline-title">The order's other events</h2>
    ${others.length === 0 ? html`<p class="muted">No other event of this order is in the inbox.</p>` : entriesTable(frame, others, "The order's events, in the order they run")}</section>`
    : ''}
<section aria-labelledby="payload-title">
  <h2 id="payload-title">Payload</h2>
  <p class="muted">${showPersonalData
    ? 'Shown in full: this dashboard was started with showPersonalData.'
    : 'Every text that may hold personal data is masked: all but ids, order numbers, statuses, times, the sales channel, product, variation and add-on names, the delivery type and the payment method and status.'} Signature headers are never stored.
    <a href="${frame.base}/entries/${encodeURIComponent(entry.id)}/payload.json" download>Download the payload${showPersonalData ? '' : ' (masked)'}</a></p>
  <pre id="payload">${payloadText}</pre>
</section>`;
  return layout(frame, { title: `Entry ${entry.id}`, section: 'entries', refreshSeconds: entry.status === 'pending' || entry.status === 'processing' ? 3 : undefined }, body);
}

export function servicePage(frame: PageFrame, view: ServiceView): Html {
  const endpoints = view.endpoints ?? [];
  const body = html`<h1>Service</h1>
${serviceSummary(frame, view, 'Key and webhook endpoints')}
${endpoints.map(
    (each) => html`<section aria-label="Deliveries of ${each.endpoint.url}">
  <h2>Deliveries to ${each.endpoint.url}</h2>
  <p class="muted">Endpoint ${each.endpoint.id}; ${each.endpoint.consecutive_failures} consecutive failures. A delivery is <span class="missed">missed</span> when the last reconcile found it dead or retrying at the service and it has not reached the inbox since, nor been acknowledged (only the inbox's own endpoints count). A delivered one shows no error: what an earlier attempt met no longer matters.</p>
  ${frame.readOnly
      ? ''
      : html`<form method="post" action="${frame.base}/service/test" class="inline">${csrfField(frame)}<input type="hidden" name="endpoint" value="${each.endpoint.id}"><button type="submit">Send a test delivery</button></form>`}
  ${each.error ? html`<p class="error">${each.error}</p>` : ''}
  ${each.deliveries.length === 0
      ? html`<p class="muted">No delivery yet.</p>`
      : html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Created</th><th scope="col">Delivery id</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Answer</th><th scope="col">Last error</th><th scope="col">Next attempt</th></tr></thead>
    <tbody>${each.deliveries.map(
      (delivery) => html`<tr>
      <td>${serviceTime(delivery.created_at)}</td><td><code>${delivery.id}</code></td><td>${delivery.event}</td>
      <td>${delivery.status}${delivery.missed ? html` <span class="missed">missed</span>` : ''}</td>
      <td class="num">${delivery.attempt_count}</td><td class="num">${delivery.response_status ?? '—'}</td>
      <td class="error-text">${delivery.status === 'delivered' ? '' : (delivery.last_error ?? '')}</td><td>${serviceTime(delivery.next_attempt_at)}</td></tr>`,
    )}</tbody></table></div>`}
</section>`,
  )}`;
  return layout(frame, { title: 'Service', section: 'service' }, body);
}

const RUN_FIELDS = new Set(['runId', 'kind', 'startedAt', 'finishedAt', 'outcome', 'results', 'counts', 'durationMs', 'error']);
function runTime(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (value instanceof Date) return formatTime(value.getTime());
  if (typeof value === 'number') return formatTime(value);
  return String(value);
}

/**
 * How a run ended, in words and a tone: a run that completed with rejected items is not a clean
 * one, and one that failed, was aborted or interrupted is neither.
 */
export function runVerdict(run: DashboardSyncRun, counts: readonly (readonly [string, unknown])[]): { tone: 'ok' | 'warn' | 'failed'; text: string } {
  const errors = Number(counts.find(([key]) => key === 'errors')?.[1] ?? 0);
  const outcome = run.outcome ?? 'unknown';
  const withErrors = errors > 0 ? ` with ${errors} ${errors === 1 ? 'error' : 'errors'}` : '';
  if (outcome === 'completed' || outcome === 'running') return { tone: errors > 0 ? 'warn' : 'ok', text: `${outcome}${withErrors}` };
  return { tone: 'failed', text: `${outcome}${withErrors}` };
}

export function syncPage(frame: PageFrame, runs: DashboardSyncRun[] | undefined, error?: string): Html {
  const body = html`<h1>Sync runs</h1>
${error ? html`<p class="error">${error}</p>` : ''}
${runs && runs.length === 0 ? html`<p>No sync run yet.</p>` : ''}
${runs && runs.length > 0
    ? html`<div class="table-wrap"><table>
  <thead><tr><th scope="col">Run</th><th scope="col">Kind</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Outcome</th><th scope="col">Counts</th><th scope="col">Rejected items</th></tr></thead>
  <tbody>${runs.map((run) => {
      // Counts read tolerantly: numbers on the run itself, or in a `counts` object.
      const fields = run as unknown as Record<string, unknown>;
      const nested = typeof fields.counts === 'object' && fields.counts !== null ? Object.entries(fields.counts as Record<string, unknown>) : [];
      const counts = [...Object.entries(fields), ...nested].filter(([key, value]) => !RUN_FIELDS.has(key) && typeof value === 'number');
      const verdict = runVerdict(run, counts);
      return html`<tr class="run-row-${verdict.tone}"><td><code>${run.runId}</code></td><td>${run.kind ?? '—'}</td><td>${runTime(run.startedAt)}</td><td>${runTime(run.finishedAt)}</td><td><span class="run-${verdict.tone}">${verdict.text}</span>${run.error ? html`<br><span class="muted">${run.error}</span>` : ''}</td>
      <td>${counts.map(([key, value], index) => html`${index > 0 ? ', ' : ''}${key} ${String(value)}`)}</td>
      <td><a href="${frame.base}/sync/runs/${encodeURIComponent(run.runId)}/errors.csv" download aria-label="Rejected items of run ${run.runId}, as CSV">CSV</a></td></tr>`;
    })}</tbody></table></div>`
    : ''}`;
  return layout(frame, { title: 'Sync', section: 'sync' }, body);
}

/** A page outside the signed-in frame (sign-in, not found, errors): the same style, no navigation. */
export function publicLayout(base: string, title: string, body: Html | string): Html {
  return documentOf(base, { title }, html`<header class="top"><span class="brand">Integration inbox</span></header>`, body);
}

/** A message in the signed-in frame, or (with only the base path) outside it. */
export function messagePage(frame: PageFrame | { base: string }, title: string, message: string): Html {
  const body = html`<h1>${title}</h1><p>${message}</p>`;
  return 'readOnly' in frame ? layout(frame, { title }, body) : publicLayout(frame.base, title, body);
}
