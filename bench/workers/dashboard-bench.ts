// The dashboard's figure, in a process of its own: `<db> <entries> <runs>` fills an inbox store
// with `entries` entries by bulk SQL (not through the receiver: a million deliveries would take an
// hour), spread over the last 7 days — pairs of order.created and order.status_changed, 5% dead,
// the newest 1% pending, payloads kept on the newest 50,000 and the dead, as retention leaves them —
// then asks each page of the dashboard `runs` times through its Fetch handler, after one warm-up,
// and prints each page's answer times in ms. `<db>` is a SQLite file, or `<postgres URL>#<schema>`.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { createDashboard } from 'integration-sdk/dashboard';
import { createInbox, type InboxStore } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';

const [db = '', entriesArg = '1000000', runsArg = '15'] = process.argv.slice(2);
const N = Number(entriesArg);
const RUNS = Number(runsArg);
const NOW = Date.now();
const SPAN = 7 * 86_400_000;
const TOKEN = 'bench-dashboard-token-0123456789';

// One SQL expression per column, over `i` (1..N), the same in both dialects but for the casts.
function columns(text: (sql: string) => string, int: (sql: string) => string): Record<string, string> {
  const at = `(${NOW - SPAN} + i * ${Math.floor(SPAN / N)})`;
  const k = '((i + 1) / 2)';
  const status = `CASE WHEN i > ${N - Math.floor(N / 100)} THEN 'pending' WHEN i % 20 = 0 THEN 'dead' ELSE 'done' END`;
  return {
    delivery_id: `'dlv-' || ${text(`lpad_i`)}`,
    event: `CASE WHEN i % 2 = 1 THEN 'order.created' ELSE 'order.status_changed' END`,
    order_id: `'ord-' || ${text(k)}`,
    ts: int(`${at} / 1000`),
    payload: `CASE WHEN i > ${N - 50_000} OR i % 20 = 0 THEN '{"event":"order.created","data":{"order_id":"ord-' || ${text(k)} || '","display_number":"' || ${text(`100000 + ${k}`)} || '","customer":{"name":"Maria Silva","phone":"+5511987654321","email":"maria@example.com","address":{"street":"Rua A","number":"1","city":"São Paulo"}},"items":[{"external_id":"SKU-1","quantity":2,"unit_price":24.9}],"totals":{"total":57.3}}}' END`,
    status,
    attempts: `CASE WHEN i % 20 = 0 THEN 10 WHEN i > ${N - Math.floor(N / 100)} THEN 0 ELSE 1 END`,
    last_error: `CASE WHEN i % 20 = 0 AND i <= ${N - Math.floor(N / 100)} THEN 'Error: ERP timed out after 30 s' END`,
    received_at: at,
    next_attempt_at: at,
    finished_at: `CASE WHEN i > ${N - Math.floor(N / 100)} THEN NULL ELSE ${at} + 1500 END`,
    display_number: text(`100000 + ${k}`),
    external_order_id: `CASE WHEN ${k} % 3 = 0 THEN 'MKT-' || ${text(k)} END`,
  };
}

async function fill(): Promise<{ store: InboxStore; fillSeconds: number }> {
  const started = performance.now();
  if (!db.startsWith('postgres')) {
    const store = sqliteStore({ path: db });
    await store.migrate();
    const sqlite = new DatabaseSync(db);
    const cols = columns((sql) => `CAST(${sql === 'lpad_i' ? "printf('%09d', i)" : sql} AS TEXT)`, (sql) => `CAST(${sql} AS INTEGER)`);
    sqlite.exec('BEGIN');
    sqlite.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
      INSERT INTO inbox_entries (${Object.keys(cols).join(', ')}, known) SELECT ${Object.values(cols).join(', ')}, 1 FROM n`);
    sqlite.exec('COMMIT');
    sqlite.close();
    return { store, fillSeconds: (performance.now() - started) / 1000 };
  }
  const [connectionString, schema = 'bench_dashboard'] = db.split('#');
  const store = postgresStore({ connectionString, schema });
  await store.migrate();
  const client = new pg.Client({ connectionString });
  await client.connect();
  const cols = columns((sql) => (sql === 'lpad_i' ? "lpad(i::text, 9, '0')" : `(${sql})::text`), (sql) => `(${sql})::bigint`);
  // One statement for the million rows, without the per-order state trigger: it takes an advisory
  // lock per order, which one transaction cannot hold a million of. The pages read the entries.
  await client.query(`ALTER TABLE "${schema}".inbox_entries DISABLE TRIGGER inbox_entries_order_state`);
  await client.query(`INSERT INTO "${schema}".inbox_entries (${Object.keys(cols).join(', ')}, known)
    SELECT ${Object.values(cols).join(', ')}, true FROM generate_series(1, ${N}) AS i`);
  await client.query(`ALTER TABLE "${schema}".inbox_entries ENABLE TRIGGER inbox_entries_order_state`);
  // As autovacuum would leave it: statistics and the visibility map (index-only counts) up to date.
  await client.query(`VACUUM ANALYZE "${schema}".inbox_entries`);
  await client.end();
  return { store, fillSeconds: (performance.now() - started) / 1000 };
}

const { store, fillSeconds } = await fill();
await store.heartbeat?.({ workerId: 'bench-worker', now: NOW, claimed: true });
const inbox = createInbox({ secret: 'whsec_unused_in_the_bench', store });
const dashboard = createDashboard({ inbox, auth: { token: TOKEN } });

const middle = Math.floor(N / 2);
const pad = (i: number) => String(i).padStart(9, '0');
const PAGES: Record<string, string> = {
  overview: '/',
  // A dashboard just started (or whose 5-minute cache of past hours ran out): every bucket counted.
  overview_uncached: '/',
  entries: '/entries',
  entries_dead: '/entries?status=dead',
  entries_event: '/entries?event=order.status_changed',
  entries_done_created: '/entries?status=done&event=order.created',
  entries_deep_page: `/entries?before_at=${NOW - SPAN + middle * Math.floor(SPAN / N)}&before_id=dlv-${pad(middle)}`,
  search_display_number: `/entries?q=%23${100000 + Math.floor(middle / 2)}`,
  search_external_id: `/entries?q=MKT-${3 * Math.floor(middle / 6)}`,
  search_delivery_id: `/entries?q=dlv-${pad(middle)}`,
  entry: `/entries/dlv-${pad(N - 10)}`,
  retry_dead_confirm: '/retry-dead',
  // The dead entries of the 6 days before the last: counted, and the first 500 listed with their orders.
  purge_confirm: '/purge?days=1',
  api_entry: `/api/entries/dlv-${pad(N - 10)}`,
  api_stats: '/api/stats',
  api_entries: '/api/entries?status=dead&limit=100',
};

const results: Record<string, number[]> = {};
for (const [name, path] of Object.entries(PAGES)) {
  const ask = async () => {
    const handler = name === 'overview_uncached' ? createDashboard({ inbox, auth: { token: TOKEN } }) : dashboard;
    const t0 = performance.now();
    const response = await handler.fetch(new Request(`http://bench.local${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    const body = await response.text();
    const ms = performance.now() - t0;
    if (response.status !== 200) throw new Error(`${name}: ${response.status} ${body.slice(0, 300)}`);
    return ms;
  };
  await ask();
  results[name] = [];
  for (let run = 0; run < RUNS; run += 1) results[name]!.push(await ask());
}
const stats = await inbox.stats();
await inbox.close();
console.log(JSON.stringify({ entries: stats.received, fillSeconds, pages: results }));
