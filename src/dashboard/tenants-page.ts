// The Tenants page: one row per merchant, `key_invalid` first, each linking to the dashboard scoped
// to it. Every value is escaped by hono/html; no key or secret is ever at hand to show.
import { html } from 'hono/html';
import { formatTime, layout, type PageFrame } from './pages.ts';
import { tenantBase } from './tenant-scope.ts';
import { ENDPOINT_HEALTH_TTL_MS, type EndpointHealth, type TenantsView } from './tenants-data.ts';

type Html = ReturnType<typeof html>;

const time = (at: string | number | null) => {
  if (at === null) return html`—`;
  const ms = typeof at === 'number' ? at : Date.parse(at);
  return html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms)}</time>`;
};

function endpointCell(health: EndpointHealth): Html {
  switch (health.state) {
    case 'ok':
      return html`<span class="run-ok">delivering</span>`;
    case 'failing':
      return html`<span class="status-dead">failing: ${health.consecutiveFailures} in a row</span>`;
    case 'missing':
      return html`<span class="status-dead">not at the service</span> <span class="muted">(connect it again)</span>`;
    case 'unchecked':
      return html`<span class="muted">not checked: ${health.why}</span>`;
    case 'error':
      return html`<span class="error-text">${health.detail}</span>`;
  }
}

export function tenantsPage(frame: PageFrame, view: TenantsView, after: string | undefined): Html {
  const root = frame.root ?? frame.base;
  const body = html`<h1>Tenants</h1>
<p class="muted">${view.keyInvalid > 0
    ? html`<strong>${view.keyInvalid} ${view.keyInvalid === 1 ? 'tenant has its key' : 'tenants have their key'} refused</strong> (<code>key_invalid</code>): nothing is sent for ${view.keyInvalid === 1 ? 'it' : 'them'} until the merchant gives a new key (<code>tenants.updateKey</code>, or <code>integration-sdk tenants update-key</code>). Listed first.`
    : 'No tenant has its key refused.'}
  Endpoint health is the service's count of failed deliveries in a row, read at most once a minute (${ENDPOINT_HEALTH_TTL_MS / 1000} s) per tenant; pick a tenant to see its entries, missed deliveries and endpoints.</p>
${view.rows.length === 0
    ? html`<p>No tenant ${after === undefined ? 'is connected yet' : 'after this one'}.</p>`
    : html`<div class="table-wrap"><table id="tenants">
  <caption class="visually-hidden">Tenants, key_invalid first, then in id order</caption>
  <thead><tr><th scope="col">Tenant</th><th scope="col">Status</th><th scope="col">Endpoint</th><th scope="col">Last order</th><th scope="col" class="num">Pending</th><th scope="col" class="num">Dead</th><th scope="col">Merchant</th></tr></thead>
  <tbody>${view.rows.map((row) => {
      const scoped = tenantBase(root, row.tenant.id);
      return html`<tr${row.tenant.status === 'key_invalid' ? html` class="run-row-failed"` : ''}>
      <td><a href="${scoped}/">${row.tenant.id}</a></td>
      <td><span class="tenant-${row.tenant.status}">${row.tenant.status}</span>${row.tenant.keyInvalidAt ? html`<br><span class="muted">key refused ${time(row.tenant.keyInvalidAt)}</span>` : ''}</td>
      <td>${endpointCell(row.endpoint)}</td>
      <td>${time(row.lastOrderAt)}</td>
      <td class="num"><a href="${scoped}/entries?status=pending" aria-label="${row.pending} pending entries of ${row.tenant.id}">${row.pending}</a></td>
      <td class="num"><a href="${scoped}/entries?status=dead" class="${row.dead > 0 ? 'status-dead' : ''}" aria-label="${row.dead} dead entries of ${row.tenant.id}">${row.dead}</a></td>
      <td><code>${row.tenant.merchantId}</code></td></tr>`;
    })}</tbody></table></div>`}
<nav class="pager" aria-label="Pages">
  ${after !== undefined ? html`<a href="${root}/tenants">First page</a>` : ''}
  ${view.next ? html`<a href="${root}/tenants?after=${encodeURIComponent(view.next)}" rel="next">More tenants</a>` : ''}
</nav>`;
  return layout(frame, { title: 'Tenants', section: 'tenants' }, body);
}
