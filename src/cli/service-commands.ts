// `orders`, `webhooks` and `inbox`: thin wrappers printing a table for people or JSON with --json.
// Order payloads hold personal data: they are printed only because the operator asked for that order.
import type { IntegrationClient } from '../index.ts';
import { currentMissed } from '../inbox/reconcile.ts';
import type { InboxEntry, InboxStore } from '../inbox/index.ts';
import { openStore, storeLocation } from './inbox-store.ts';

function print(json: boolean | undefined, value: unknown, text: () => string): void {
  console.log(json ? JSON.stringify(value) : text());
}

/** `lastError` → `last_error`, `oldestPendingAgeMs` → `oldest_pending_age_ms`. */
function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((c) => String(row[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: readonly string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

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
  print(json, endpoints, () => table(endpoints.map((e) => ({ ...e, events: e.events.join(',') })), ['id', 'url', 'events', 'consecutive_failures', 'created_at']));
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
  print(json, deliveries, () => table(deliveries, ['id', 'event', 'status', 'attempt_count', 'response_status', 'last_error', 'created_at']));
  return deliveries.some((d) => d.status === 'dead') ? 1 : 0;
}

export async function webhooksDelete(client: IntegrationClient, id: string, json?: boolean): Promise<number> {
  await client.webhooks.delete(id);
  print(json, { deleted: id }, () => `Deleted webhook ${id}.`);
  return 0;
}

/** Every dead entry, oldest first, a page at a time (the store's `list` takes a limit). */
async function allDead(inbox: InboxStore): Promise<InboxEntry[]> {
  const entries: InboxEntry[] = [];
  for (let page = await inbox.list({ status: 'dead', limit: PAGE }); ; page = await inbox.list({ status: 'dead', limit: PAGE, after: entries.at(-1)! })) {
    entries.push(...page);
    if (page.length < PAGE) return entries;
  }
}

const PAGE = 1000;

/** `inbox stats | dead | retry <id> | retry-dead`; exit 1 when dead entries remain or a retry found nothing. */
export async function inboxCommand(action: 'stats' | 'dead' | 'retry' | 'retry-dead', store: string | undefined, deliveryId: string | undefined, json?: boolean): Promise<number> {
  const inbox = await openStore(storeLocation(store));
  try {
    const now = Date.now();
    if (action === 'stats') {
      const counts = await inbox.stats(now);
      // As inbox.stats(): `missed` once an `inbox reconcile` has run.
      const missed = await currentMissed(inbox);
      const stats = missed === undefined ? counts : { ...counts, missed: missed.length };
      // People read snake_case names, as on the wire and everywhere else the CLI prints; --json keeps the store's.
      print(json, stats, () => Object.entries(stats).map(([k, v]) => `${snakeCase(k).padEnd(22)} ${v}`).join('\n'));
      return stats.dead > 0 ? 1 : 0;
    }
    if (action === 'dead') {
      const dead = await allDead(inbox);
      const rows = dead.map((e) => ({ deliveryId: e.id, event: e.event, orderId: e.orderId, attempts: e.attempts, lastError: e.lastError, receivedAt: new Date(e.receivedAt).toISOString() }));
      print(json, rows, () => table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [snakeCase(k), v]))), ['delivery_id', 'event', 'order_id', 'attempts', 'last_error', 'received_at']));
      return dead.length > 0 ? 1 : 0;
    }
    if (action === 'retry') {
      const done = await inbox.retry(deliveryId ?? '', now);
      print(json, { retried: done, delivery_id: deliveryId }, () => (done ? `Delivery ${deliveryId} is pending again.` : `No dead or done entry ${deliveryId} with its payload: nothing to retry.`));
      return done ? 0 : 1;
    }
    const count = await inbox.retryDead(now);
    print(json, { retried: count }, () => `${count === 1 ? '1 dead entry is' : `${count} dead entries are`} pending again.`);
    return 0;
  } finally {
    await inbox.close();
  }
}
