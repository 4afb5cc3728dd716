// The pages an action shows before it does anything: what it will touch, counted, and a form that
// sends that count back, so that nothing happens on a count nobody saw.
import { html } from 'hono/html';
import type { PurgePreview } from '../inbox/store.ts';
import { csrfField, entriesTable, formatTime, layout, type PageFrame } from './pages.ts';

type Html = ReturnType<typeof html>;

const entries = (n: number) => `${n} dead ${n === 1 ? 'entry' : 'entries'}`;

export function confirmRetryDeadPage(frame: PageFrame, dead: number): Html {
  const body = html`<h1>Retry all dead entries</h1>
${dead === 0
    ? html`<p>There is no dead entry to retry.</p><p><a href="${frame.base}/">Back to the overview</a></p>`
    : html`<p id="retry-dead-count"><strong>${entries(dead)}</strong> will go back to pending, attempts from 0, and the workers will run ${dead === 1 ? 'it' : 'them'} again.
  Fix what made them fail first, or they will die again.</p>
<form method="post" action="${frame.base}/retry-dead" class="inline">${csrfField(frame)}<input type="hidden" name="expected" value="${dead}">
  <button type="submit" class="danger">Retry ${entries(dead)}</button> <a href="${frame.base}/">Cancel</a></form>`}`;
  return layout(frame, { title: 'Retry all dead entries', section: 'overview' }, body);
}

/** What a purge of dead entries older than `days` (finished before `before`) will delete. */
export interface PurgeConfirmation {
  days: number;
  before: number;
  preview: PurgePreview;
}

/** The orders of the listed entries, once each: `#display number`, else the order id. */
function ordersOf(preview: PurgePreview): string[] {
  const orders = new Set<string>();
  for (const entry of preview.entries) {
    if (entry.displayNumber) orders.add(`#${entry.displayNumber}`);
    else if (entry.orderId) orders.add(entry.orderId);
  }
  return [...orders];
}

export function confirmPurgePage(frame: PageFrame, { days, before, preview }: PurgeConfirmation): Html {
  const { count } = preview;
  const orders = ordersOf(preview);
  const age = html`finished more than ${days} ${days === 1 ? 'day' : 'days'} ago (before ${formatTime(before)})`;
  const body = html`<h1>Purge dead entries</h1>
${count === 0
    ? html`<p id="purge-count">No dead entry ${age}: there is nothing to delete.</p><p><a href="${frame.base}/">Back to the overview</a></p>`
    : html`<p id="purge-count"><strong>${entries(count)}</strong> ${age} will be deleted for good.
  A dead entry may be the only copy of an order the ERP refused: retry it, or write its order down, before deleting it.</p>
<p class="order-list" id="purge-orders">${orders.length === 0
        ? 'None of them belongs to an order.'
        : html`Orders: ${orders.join(', ')}${count > preview.entries.length ? html` <span class="muted">(of the first ${preview.entries.length} entries, listed below; ${count - preview.entries.length} more are not listed)</span>` : ''}`}</p>
<form method="post" action="${frame.base}/purge" class="inline">${csrfField(frame)}
  <input type="hidden" name="days" value="${days}"><input type="hidden" name="before" value="${before}"><input type="hidden" name="expected" value="${count}">
  <button type="submit" class="danger">Delete ${entries(count)}</button> <a href="${frame.base}/">Cancel</a></form>
${entriesTable(frame, preview.entries, 'The dead entries to delete, oldest first')}`}`;
  return layout(frame, { title: 'Purge dead entries', section: 'overview' }, body);
}
