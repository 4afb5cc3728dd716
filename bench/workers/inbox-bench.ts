// The inbox's figures, in a process of their own. `receive <db> <passes> <perPass>`: signed
// deliveries posted over keep-alive sockets to (a) the inbox handler and (b) the floor, a bare
// node:http handler doing the same HMAC check and the same single durable insert (SQLite: WAL,
// synchronous=FULL; Postgres: one committed INSERT through a pg.Pool of the same size as the
// store's); passes alternate so that both see the same machine. `fill <db> <n>` stores n entries;
// `work <db>`: one worker process working entries with an empty handler until none is left.
// `<db>` is a SQLite file path, or `<postgres URL>#<schema>` for a Postgres store.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Agent, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { createInbox, type InboxStore } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { orderCreatedOfSize } from '../lib/payloads.ts';
import { postDelivery, throughput } from '../lib/post-deliveries.ts';

const SECRET = 'whsec_bench_0123456789abcdef';
// A typical order of about 2 KB, valid against the SDK's OrderSchema.
const ORDER = orderCreatedOfSize(2048, 0).event.data;

/** A `<db>` argument: a SQLite file, or a Postgres URL with the schema after `#`. */
function storeFor(db: string): InboxStore {
  if (!db.startsWith('postgres')) return sqliteStore({ path: db });
  const [connectionString, schema] = db.split('#');
  return postgresStore({ connectionString, schema });
}

type Insert = (deliveryId: string, payload: string) => Promise<void>;

function sqliteFloor(path: string): { insert: Insert; close(): Promise<void> } {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS floor (delivery_id TEXT PRIMARY KEY, payload TEXT NOT NULL)');
  const statement = db.prepare('INSERT INTO floor (delivery_id, payload) VALUES (?, ?) ON CONFLICT DO NOTHING');
  return { insert: async (id, payload) => void statement.run(id, payload), close: async () => db.close() };
}

async function postgresFloor(url: string): Promise<{ insert: Insert; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_floor (delivery_id TEXT PRIMARY KEY, payload TEXT NOT NULL)');
  return {
    insert: async (id, payload) => void (await pool.query('INSERT INTO bench_floor (delivery_id, payload) VALUES ($1, $2) ON CONFLICT DO NOTHING', [id, payload])),
    close: () => pool.end(),
  };
}

function floorListener(insert: Insert): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const timestamp = String(req.headers['x-service-timestamp']);
      const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(`${timestamp}.`).update(body).digest('hex')}`);
      const given = Buffer.from(String(req.headers['x-service-signature-256']));
      if (given.length !== expected.length || !timingSafeEqual(given, expected) || Math.abs(Number(timestamp) - Date.now() / 1000) > 300) {
        res.statusCode = 400;
        res.end();
        return;
      }
      insert(String(req.headers['x-service-delivery-id']), body.toString('utf8')).then(
        () => res.end('OK'),
        () => ((res.statusCode = 503), res.end()),
      );
    });
  };
}

async function listen(listener: RequestListener): Promise<{ port: number; close(): void }> {
  const server = createServer(listener);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => (server.closeAllConnections(), server.close()) };
}

async function receive(target: string, passes: number, perPass: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-bench-'));
  const onPostgres = target.startsWith('postgres');
  const inbox = createInbox({ secret: SECRET, store: storeFor(onPostgres ? target : join(dir, 'inbox.db')) });
  await inbox.stats();
  const floorDb = onPostgres ? await postgresFloor(target.split('#')[0]!) : sqliteFloor(join(dir, 'floor.db'));
  const sdk = await listen(inbox.handler.node);
  const floor = await listen(floorListener(floorDb.insert));
  const to = (port: number) => (agent: Agent) => postDelivery(agent, port, '/webhooks', SECRET);
  await throughput(200, to(sdk.port));
  await throughput(200, to(floor.port));
  const result = { sdk: [] as number[], floor: [] as number[] };
  for (let pass = 0; pass < passes; pass += 1) {
    result.floor.push(await throughput(perPass, to(floor.port)));
    result.sdk.push(await throughput(perPass, to(sdk.port)));
  }
  sdk.close();
  floor.close();
  await inbox.close();
  await floorDb.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify(result));
}

async function fill(db: string, count: number): Promise<void> {
  const store = storeFor(db);
  await store.migrate();
  for (let i = 0; i < count; i += 1) {
    const orderId = `order-${i}`;
    await store.insert({ deliveryId: `delivery-${i}`, event: 'order.created', orderId, ts: 1_800_000_000, payload: JSON.stringify({ event: 'order.created', data: { ...ORDER, order_id: orderId } }), known: true, receivedAt: Date.now() });
  }
  await store.close();
  console.log(JSON.stringify({ filled: count }));
}

async function work(db: string): Promise<void> {
  const inbox = createInbox({ secret: SECRET, store: storeFor(db) });
  const started = performance.now();
  let worked = 0;
  const worker = inbox.startWorker({ handlers: { 'order.created': async () => void (worked += 1) }, concurrency: 8, pollMs: 50 });
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stats = await inbox.stats();
    if (stats.pending === 0 && stats.processing === 0) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  await inbox.close();
  console.log(JSON.stringify({ worked, seconds }));
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'receive') await receive(args[0]!, Number(args[1]), Number(args[2]));
else if (mode === 'fill') await fill(args[0]!, Number(args[1]));
else if (mode === 'work') await work(args[0]!);
else throw new Error(`unknown mode ${mode}`);
