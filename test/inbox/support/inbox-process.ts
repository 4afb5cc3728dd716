// A receiver and/or worker process for the crash test: the parent SIGKILLs it at random moments.
// Each handler run appends `start` and `end` lines to the effects file, so that the parent can tell
// runs that completed from runs a kill cut short.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createInbox } from '../../../src/inbox/index.ts';
import { sqliteStore } from '../../../src/inbox/sqlite/index.ts';
import type { WebhookEvent } from '../../../src/webhooks/index.ts';

const { INBOX_DB, INBOX_EFFECTS, INBOX_PORT, INBOX_SECRET } = process.env;
const inbox = createInbox({ secret: INBOX_SECRET!, store: sqliteStore({ path: INBOX_DB! }) });

const record = (phase: 'start' | 'end', event: WebhookEvent, deliveryId: string) =>
  appendFileSync(INBOX_EFFECTS!, `${JSON.stringify({ phase, id: deliveryId, pid: process.pid, event: event.event, order: (event.data as { order_id: string }).order_id })}\n`);

const effect = async (event: WebhookEvent, ctx: { deliveryId: string }) => {
  record('start', event, ctx.deliveryId);
  // Some work, during which a kill may land.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
  record('end', event, ctx.deliveryId);
};

inbox.startWorker({ handlers: { 'order.created': effect, 'order.status_changed': effect }, concurrency: 4, leaseMs: 1500 });

if (INBOX_PORT) {
  createServer(inbox.handler.node).listen(Number(INBOX_PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
} else {
  process.stdout.write('ready\n');
}
