// A durable webhook inbox on Express with SQLite: the receiver stores each verified delivery before
// answering 2xx, and a worker in the same process writes orders into the ERP.
//
//   npm run build   # once: examples import the package as a user would
//   WEBHOOK_SECRET=whsec_... PORT=3000 node examples/inbox-express.ts
//
// Several processes may share the SQLite file (e.g. this one receiving, others only working).
import express from 'express';
import { createInbox } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';

const inbox = createInbox({
  secret: (process.env.WEBHOOK_SECRET ?? '').split(','),
  store: sqliteStore({ path: process.env.INBOX_PATH ?? './integration-inbox.db' }),
  retention: { days: 7 },
});

const app = express();
// No body parser on this route: the inbox reads the raw bytes the signature covers (1 MB at most).
app.post('/webhooks/integration', inbox.handler.node);
const server = app.listen(Number(process.env.PORT ?? 3000));

const worker = inbox.startWorker({
  handlers: {
    'order.created': async (event, ctx) => {
      // Write the order into the ERP, keyed by event.data.order_id so that a second run (at least
      // once: a crash between the write and `done`) updates instead of inserting twice.
      console.log(`order #${event.data.display_number} (attempt ${ctx.attempt})`);
    },
    'order.status_changed': async (event, ctx) => {
      const order = await ctx.order(); // the stored order.created; no extra request
      console.log(`order #${order.display_number}: ${event.data.previous_status} → ${event.data.status}`);
    },
  },
  concurrency: 4,
  maxAttempts: 10,
  onError: (error, entry) => console.warn(`inbox ${entry?.event ?? ''} ${entry?.id ?? ''} failed: ${String(error)}`),
});

process.on('SIGTERM', () => {
  server.close();
  void worker.stop().then(() => inbox.close());
});
