// `orders`, `webhooks` and `inbox`: thin wrappers printing a table for people or JSON with --json.
// Order payloads hold personal data: they are printed only because the operator asked for that order.
import type { IntegrationClient } from '../index.ts';
import { currentMissed } from '../inbox/reconcile.ts';
import type { InboxEntry, InboxStore } from '../inbox/index.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../schemas/webhooks.ts';
import { openStore, storeLocation } from './inbox-store.ts';
import { table, terminalWidth, type Column } from './table.ts';

function print(json: boolean | undefined, value: unknown, text: () => string): void {
  console.log(json ? JSON.stringify(value) : text());
}

/** `lastError` → `last_error`, `oldestPendingAgeMs` → `oldest_pending_age_ms`. */
function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A column showing a field as text, headed by its snake_case name; `null` shows as nothing. */
function field<Row>(header: string, read: (row: Row) => unknown, layout: Omit<Column<Row>, 'header' | 'value'> = {}): Column<Row> {
  return { header, value: (row) => String(read(row) ?? ''), ...layout };
}

const ENDPOINT_COLUMNS: Column<WebhookEndpoint>[] = [
  field('id', (e) => e.id),
  field('url', (e) => e.url, { kind: 'text', min: 30 }),
  field('events', (e) => e.events.join(','), { kind: 'text', optional: 1 }),
  field('consecutive_failures', (e) => e.consecutive_failures, { optional: 2 }),
  field('created_at', (e) => e.created_at, { optional: 0 }),
];

const DELIVERY_COLUMNS: Column<WebhookDelivery>[] = [
  field('id', (d) => d.id),
  field('event', (d) => d.event, { optional: 2 }),
  field('status', (d) => d.status),
  field('attempt_count', (d) => d.attempt_count, { optional: 0 }),
  field('response_status', (d) => d.response_status, { optional: 1 }),
  field('last_error', (d) => d.last_error, { kind: 'text', min: 30 }),
  field('created_at', (d) => d.created_at, { optional: 3 }),
];

/** `inbox dead`: what an operator needs first on a narrow terminal is which delivery, which order and why. */
const DEAD_COLUMNS: Column<InboxEntry>[] = [
  field('delivery_id', (e) => e.id),
  field('event', (e) => e.event, { optional: 3 }),
  field('order', (e) => (e.displayNumber ? `#${e.displayNumber}` : null)),
  field('order_id', (e) => e.orderId, { optional: 0 }),
  field('attempts', (e) => e.attempts, { optional: 1 }),
  field('last_error', (e) => e.lastError, { kind: 'text', min: 30 }),
  field('received_at', (e) => new Date(e.receivedAt).toISOString(), { optional: 2 }),
];

export async function ordersGet(client: IntegrationClient, orderId: string, json?: boolean): Promise<number> {
  const order = await client.orders.get(orderId);
  print(json, order, () => JSON.stringify(order, null, 2));
  return 0;
}

/** Exit 1 when no order has that external id (the command ran, nothing found). */
export async function ordersFind(client: IntegrationClient, externalId: string, json?: boolean): Promise<number> {
  const order = await client.orders.findByExternalId(externalId);
  if (order === null) {
    print(json, null, () => `No order with external_order_id ${externalId}.`);
    return 1;
  }
  print(json, order, () => JSON.stringify(order, null, 2));
  return 0;
}

export async function webhooksList(client: IntegrationClient, json?: boolean): Promise<number> {
  const endpoints = await client.webhooks.list();
  print(json, endpoints, () => table(endpoints, ENDPOINT_COLUMNS, terminalWidth()));
  return 0;
}

/** Prints the new secret once, on stdout only, with the service's warning. */
export async function webhooksCreate(client: IntegrationClient, url: string, events: string, json?: boolean): Promise<number> {
  const created = await client.webhooks.create({ url, events: events.split(',').map((e) => e.trim()).filter(Boolean) as never });
  print(json, created, () => [`Created webhook ${created.id} for ${created.url} (${created.events.join(', ')}).`, `Secret: ${created.secret}`, created.warning].join('\n'));
  return 0;
}

export async function webhooksTest(client: IntegrationClient, id: string, json?: boolean): Promise<number> {
  const result = await client.webhooks.test(id);
  print(json, result, () => `Test delivery ${result.delivery_id} queued; see \`integration-sdk webhooks deliveries ${id}\`.`);
  return 0;
}

/** Exit 1 when any listed delivery is dead. */
export async function webhooksDeliveries(client: IntegrationClient, id: string, limit: number | undefined, json?: boolean): Promise<number> {
  const deliveries = await client.webhooks.deliveries(id, limit === undefined ? {} : { limit });
  print(json, deliveries, () => table(deliveries, DELIVERY_COLUMNS, terminalWidth()));
  return deliveries.some((d) => d.status === 'dead') ? 1 : 0;
}

export async function webhooksDelete(client: IntegrationClient, id: string, json?: boolean): Promise<number> {
  await client.webhooks.delete(id);
  print(json, { deleted: id }, () => `Deleted webhook ${id}.`);
  return 0;
}

/**
 * Every dead entry, oldest first, a page at a time. Through the store's `page` when it has one
 * (both shipped stores do): its rows carry the order's display number, `list`'s do not.
 */
async function allDead(inbox: InboxStore, tenant: string | undefined): Promise<InboxEntry[]> {
  const entries: InboxEntry[] = [];
  const mine = tenant === undefined ? {} : { tenant };
  if (inbox.page) {
    for (let page = await inbox.page({ status: 'dead', limit: PAGE, ...mine }); ; page = await inbox.page({ status: 'dead', limit: PAGE, before: entries.at(-1)!, ...mine })) {
      entries.push(...page);
      if (page.length < PAGE) return entries.reverse(); // pages come newest first
    }
  }
  for (let page = await inbox.list({ status: 'dead', limit: PAGE, ...mine }); ; page = await inbox.list({ status: 'dead', limit: PAGE, after: entries.at(-1)!, ...mine })) {
    entries.push(...page);
    if (page.length < PAGE) return entries;
  }
}

const PAGE = 1000;

/**
 * `inbox stats | dead | retry <id> | retry-dead [--tenant <id>]`; exit 1 when dead entries remain or
 * a retry found nothing. With `--tenant`, one tenant's entries of an inbox of many merchants.
 */
export async function inboxCommand(action: 'stats' | 'dead' | 'retry' | 'retry-dead', store: string | undefined, deliveryId: string | undefined, json?: boolean, tenant?: string): Promise<number> {
  const inbox = await openStore(storeLocation(store));
  try {
    const now = Date.now();
    const mine = tenant === undefined ? undefined : { tenant };
    if (action === 'stats') {
      const counts = await inbox.stats(now, mine);
      // As inbox.stats(): `missed` once an `inbox reconcile` has run.
      const missed = await currentMissed(inbox, tenant);
      const stats = missed === undefined ? counts : { ...counts, missed: missed.length };
      // People read snake_case names, as on the wire and everywhere else the CLI prints; --json keeps the store's.
      print(json, stats, () => Object.entries(stats).map(([k, v]) => `${snakeCase(k).padEnd(22)} ${v}`).join('\n'));
      return stats.dead > 0 ? 1 : 0;
    }
    if (action === 'dead') {
      const dead = await allDead(inbox, tenant);
      const rows = dead.map((e) => ({ deliveryId: e.id, event: e.event, orderId: e.orderId, displayNumber: e.displayNumber ?? null, attempts: e.attempts, lastError: e.lastError, receivedAt: new Date(e.receivedAt).toISOString() }));
      print(json, rows, () => table(dead, DEAD_COLUMNS, terminalWidth()));
      return dead.length > 0 ? 1 : 0;
    }
    if (action === 'retry') {
      const done = await inbox.retry(deliveryId ?? '', now, tenant);
      print(json, { retried: done, delivery_id: deliveryId }, () => (done ? `Delivery ${deliveryId} is pending again.` : `No dead or done entry ${deliveryId} with its payload: nothing to retry.`));
      return done ? 0 : 1;
    }
    const count = await inbox.retryDead(now, mine);
    print(json, { retried: count }, () => `${count === 1 ? '1 dead entry is' : `${count} dead entries are`} pending again.`);
    return 0;
  } finally {
    await inbox.close();
  }
}
