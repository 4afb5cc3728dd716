// A receiver and a worker in one process, as an ERP would run them: the crash test SIGKILLs it at
// random moments and starts it again on the same port and database file.
// argv: port, database file, webhook secret, log file.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createInbox } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';

const [port = '0', path = '', secret = '', log = ''] = process.argv.slice(2);
const inbox = createInbox({ secret, store: sqliteStore({ path }) });
inbox.startWorker({
  concurrency: 2,
  leaseMs: 500,
  pollMs: 20,
  retryDelayMs: () => 50,
  handlers: {
    // The "ERP write": started and finished marks, with work in between that a kill can interrupt.
    'order.created': async (_event, ctx) => {
      appendFileSync(log, `start ${ctx.deliveryId}\n`);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 40));
      appendFileSync(log, `end ${ctx.deliveryId}\n`);
    },
    'order.status_changed': async (_event, ctx) => {
      appendFileSync(log, `start ${ctx.deliveryId}\n`);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 40));
      appendFileSync(log, `end ${ctx.deliveryId}\n`);
    },
  },
});
createServer(inbox.handler.node).listen(Number(port), '127.0.0.1', () => console.log('ready'));
