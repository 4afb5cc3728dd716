// A worker process for the fairness test: it works the shared store (a SQLite file, or a Postgres
// schema) with `concurrency` handlers, each taking a few milliseconds, and appends one line per
// handler that completed to the effects file, which every process and the parent append to: the
// file's order is the order things happened in.
import { appendFileSync } from 'node:fs';
import { createInbox } from '../../../src/inbox/index.ts';
import { postgresStore } from '../../../src/inbox/postgres/index.ts';
import { sqliteStore } from '../../../src/inbox/sqlite/index.ts';

const { FAIR_DB, FAIR_PG_URL, FAIR_PG_SCHEMA, FAIR_EFFECTS, FAIR_CONCURRENCY, FAIR_HANDLER_MS } = process.env;
const store = FAIR_PG_URL ? postgresStore({ connectionString: FAIR_PG_URL, schema: FAIR_PG_SCHEMA! }) : sqliteStore({ path: FAIR_DB! });
// Only the working side runs here: the secret verifies nothing.
const inbox = createInbox({ secret: 'whsec_worker_only', store });

const work = async (_event: unknown, ctx: { tenant: string | null; deliveryId: string }) => {
  await new Promise((resolve) => setTimeout(resolve, Number(FAIR_HANDLER_MS)));
  appendFileSync(FAIR_EFFECTS!, `${JSON.stringify({ done: ctx.deliveryId, tenant: ctx.tenant, pid: process.pid })}\n`);
};
inbox.startWorker({ handlers: { 'order.created': work }, concurrency: Number(FAIR_CONCURRENCY), pollMs: 50 });
process.on('SIGTERM', () => void inbox.close().then(() => process.exit(0)));
process.stdout.write('ready\n');
