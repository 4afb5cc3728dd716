// A durable webhook inbox for Fetch servers (Hono, Next.js route handlers, Bun, Deno) on Postgres:
// the receiver can run serverless, and the workers run wherever a process stays up.
//
//   npm run build   # once: examples import the package as a user would
//   DATABASE_URL=postgres://... WEBHOOK_SECRET=whsec_... node examples/inbox-fetch-postgres.ts
import { createServer } from 'node:http';
import { createInbox } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';

const store = postgresStore({
  connectionString: process.env.DATABASE_URL!,
  schema: 'integration_inbox',
  // Behind PgBouncer in transaction mode, LISTEN does not work: set listen: false, workers poll.
  listen: process.env.PGBOUNCER !== '1',
});
await store.migrate(); // creates the schema and table once; the inbox also does it on first use

const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET!, store });

/** The route handler a Fetch server mounts, e.g. `export const POST = handle` in Next.js. */
export const handle = (request: Request): Promise<Response> => inbox.handler(request);

// A worker process: start as many as needed, on any machine that reaches the database.
const worker = inbox.startWorker({
  handlers: {
    'order.created': async (event) => console.log(`order #${event.data.display_number}`),
  },
  concurrency: 8,
});

// For this example, a node:http server hands requests to the Fetch handler.
const server = createServer(inbox.handler.node).listen(Number(process.env.PORT ?? 3000));
process.on('SIGTERM', () => {
  server.close();
  void worker.stop().then(() => inbox.close());
});
