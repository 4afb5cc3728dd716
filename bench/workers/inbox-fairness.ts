// Worker fairness (issue 28): the latency of a quiet tenant's new order while another tenant's
// backlog drains, in claim rounds (the busy tenant's entries completed between the quiet order's
// arrival and its completion; the contract: at most 2 × concurrency) and in ms, against the same
// latency with no backlog (the baseline, same process). One worker process with `concurrency`
// handlers, each a few ms of work.
// argv: <db> (a SQLite file, or `<postgres URL>#<schema>`), backlog, concurrency, handler ms.
// Prints { idleMs: [...], quietMs: [...], busyBetween: [...], drainedS }.
import { createInbox, type InboxStore, type NewInboxEntry } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';

const [db = '', backlogArg = '10000', concurrencyArg = '8', handlerMsArg = '2'] = process.argv.slice(2);
const backlog = Number(backlogArg);
const concurrency = Number(concurrencyArg);

function storeFor(location: string): InboxStore {
  if (!location.startsWith('postgres')) return sqliteStore({ path: location });
  const [connectionString, schema] = location.split('#');
  return postgresStore({ connectionString, schema });
}

let n = 0;
const order = (tenant: string): NewInboxEntry => {
  const orderId = `order-${++n}`;
  return { tenant, deliveryId: `delivery-${n}`, event: 'order.created', orderId, ts: 1_800_000_000, payload: JSON.stringify({ event: 'order.created', data: { order_id: orderId } }), known: true, receivedAt: Date.now() };
};

const store = storeFor(db);
await store.migrate();
const inbox = createInbox({ secret: 'whsec_worker_only', store });
const done = new Map<string, number>();
let busyDone = 0;
const waiting = new Map<string, () => void>();
const startWorker = () => inbox.startWorker({
  concurrency,
  pollMs: 50,
  handlers: {
    'order.created': async (_event, ctx) => {
      await new Promise((resolve) => setTimeout(resolve, Number(handlerMsArg)));
      if (ctx.tenant === 'busy') busyDone += 1;
      else {
        done.set(ctx.deliveryId, performance.now());
        waiting.get(ctx.deliveryId)?.();
      }
    },
  },
});

/** Stores a quiet tenant's order; resolves with its latency (ms) and the busy entries completed meanwhile. */
async function quiet(): Promise<{ ms: number; busy: number }> {
  const entry = order('quiet');
  const finished = new Promise<void>((resolve) => waiting.set(entry.deliveryId, resolve));
  const started = performance.now();
  await store.insert(entry);
  const busyBefore = busyDone;
  await finished;
  return { ms: done.get(entry.deliveryId)! - started, busy: busyDone - busyBefore };
}

const idle = startWorker();
const idleMs: number[] = [];
for (let i = 0; i < 5; i += 1) idleMs.push((await quiet()).ms);
await idle.stop();

// The busy tenant's backlog, stored while no worker runs (so it is all waiting), then drained.
const fillStarted = performance.now();
for (let i = 0; i < backlog; i += 1) await store.insert(order('busy'));
const fillS = (performance.now() - fillStarted) / 1000;
const drainStarted = performance.now();
startWorker();
const quietMs: number[] = [];
const busyBetween: number[] = [];
// A quiet order at every tenth of the backlog, while it drains.
while (busyDone < backlog * 0.9) {
  const next = busyDone + backlog / 12;
  while (busyDone < next) await new Promise((resolve) => setTimeout(resolve, 5));
  const result = await quiet();
  quietMs.push(result.ms);
  busyBetween.push(result.busy);
}
while (busyDone < backlog) await new Promise((resolve) => setTimeout(resolve, 10));
const drainedS = (performance.now() - drainStarted) / 1000;
await inbox.close();
console.log(JSON.stringify({ backlog, concurrency, idleMs, quietMs, busyBetween, drainedS, fillS }));
