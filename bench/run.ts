// `npm run bench`: measures each figure of issue 5 as a ratio against a baseline measured in the
// same run, prints the targets and the figures, and writes bench/results.json. No figure fails the
// run: it exits non-zero only when a measurement itself errors (a worker crashed, a server did
// not start, a result was wrong). `npm run bench -- --only verify,size` runs a subset.
import { writeFileSync } from 'node:fs';
import { bulkFigure } from './figures/bulk.ts';
import { cliFigure } from './figures/cli.ts';
import { dashboardFigure } from './figures/dashboard.ts';
import { healthFigure } from './figures/health.ts';
import { inboxFigure } from './figures/inbox.ts';
import { inboxTenantsFigure } from './figures/inbox-tenants.ts';
import { otelFigure } from './figures/otel.ts';
import { rateFigure } from './figures/rate.ts';
import { sharedRateFigure } from './figures/shared-rate.ts';
import { sizeFigure } from './figures/size.ts';
import { streamFigure } from './figures/stream.ts';
import { syncFigure } from './figures/sync.ts';
import { tenantsFigure } from './figures/tenants.ts';
import { tenantsBudgetFigure } from './figures/tenants-budget.ts';
import { verifyFigure } from './figures/verify.ts';
import type { Figure, TargetCheck } from './lib/figure.ts';
import { machine } from './lib/machine.ts';
import { table } from './lib/table.ts';

// Cheap and CPU-bound first; the long, mostly idle rate run last.
const FIGURES: Figure[] = [sizeFigure, verifyFigure, healthFigure, otelFigure, bulkFigure, streamFigure, cliFigure, rateFigure, sharedRateFigure, inboxFigure, dashboardFigure, syncFigure, tenantsFigure, tenantsBudgetFigure, inboxTenantsFigure];
// The ids results.json promises, in the order issue 5 lists them.
const FIGURE_IDS = [
  'verify_2kb_x_floor', 'verify_64kb_x_floor', 'verify_2kb_x_stripe', 'verify_64kb_x_stripe',
  'health_x_raw_fetch', 'health_x_openai', 'bulk_100k_time_x_raw', 'bulk_100k_rss_x_raw',
  'stream_1m_peak_rss_mb', 'stream_1m_rss_x_raw', 'rate_fidelity_pct', 'rate_429_after_first_second',
  'webhooks_entry_gzip_kb', 'main_entry_gzip_kb', 'main_import_ms',
  'shared_rate_1p_pct', 'shared_rate_2p_pct', 'shared_rate_4p_pct', 'shared_rate_8p_pct',
  'shared_rate_429_after_first_s', 'shared_rate_redis_calls_per_request',
  'inbox_receive_sqlite_x_floor', 'inbox_received_per_s_sqlite', 'inbox_worked_per_s_sqlite', 'inbox_worked_per_s_sqlite_2', 'inbox_worked_per_s_sqlite_4',
  'inbox_receive_postgres_x_floor', 'inbox_received_per_s_postgres', 'inbox_worked_per_s_postgres', 'inbox_worked_per_s_postgres_2', 'inbox_worked_per_s_postgres_4',
  'otel_off_health_x_raw_fetch', 'otel_on_x_off', 'otel_added_us_per_call',
  'cli_100k_time_x_library', 'cli_100k_floor_x_library', 'cli_1gb_rss_x_10mb',
  'dashboard_1m_sqlite_median_ms', 'dashboard_1m_sqlite_worst_ms', 'dashboard_1m_postgres_median_ms', 'dashboard_1m_postgres_worst_ms',
  'sync_1pct_writes', 'sync_1pct_time_x_full', 'sync_1m_unchanged_writes', 'sync_1m_unchanged_s', 'sync_1m_unchanged_rss_x_100k', 'sync_all_changed_x_upsert',
  'tenants_memory_kb_per_tenant', 'tenants_memory_x_client',
  'tenants_budget_1p_wait_p50_ms', 'tenants_budget_1p_wait_p95_ms', 'tenants_budget_1p_fcfs_wait_p95_ms', 'tenants_budget_1p_used_pct', 'tenants_budget_1p_429_after_first_s',
  'tenants_budget_4p_wait_p50_ms', 'tenants_budget_4p_wait_p95_ms', 'tenants_budget_4p_fcfs_wait_p95_ms', 'tenants_budget_4p_used_pct', 'tenants_budget_4p_429_after_first_s',
  'inbox_tenants_receive_x_one', 'inbox_tenants_received_per_s',
  'inbox_fair_busy_between_max_sqlite', 'inbox_fair_quiet_ms_sqlite', 'inbox_fair_quiet_x_idle_sqlite',
  'inbox_fair_busy_between_max_postgres', 'inbox_fair_quiet_ms_postgres', 'inbox_fair_quiet_x_idle_postgres',
];

function selected(): Figure[] {
  const at = process.argv.indexOf('--only');
  if (at === -1) return FIGURES;
  const names = (process.argv[at + 1] ?? '').split(',');
  const unknown = names.filter((name) => !FIGURES.some((figure) => figure.name === name));
  if (unknown.length > 0) throw new Error(`unknown figure(s) ${unknown.join(', ')}; known: ${FIGURES.map((f) => f.name).join(', ')}`);
  return FIGURES.filter((figure) => names.includes(figure.name));
}

const started = performance.now();
const host = machine();
console.log(`integration-sdk bench: ${host.cores} cores, ${host.cpu}, Node ${host.node}, load ${host.loadAverage1m}`);

const figures: Record<string, number> = {};
const details: Record<string, unknown> = { machine: host };
const targets: TargetCheck[] = [];
const errors: { figure: string; error: string }[] = [];

for (const figure of selected()) {
  const t0 = performance.now();
  process.stdout.write(`- ${figure.title} ... `);
  try {
    const result = await figure.run();
    Object.assign(figures, result.figures);
    details[figure.name] = result.details;
    targets.push(...result.targets);
    console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    errors.push({ figure: figure.name, error: message });
    console.log(`ERROR\n${message}`);
  }
}

const elapsedS = (performance.now() - started) / 1000;
details.targets = targets;
details.runSeconds = Math.round(elapsedS);
if (errors.length > 0) details.errors = errors;

console.log(`\n${table(['Target', 'Measured', 'Result'], targets.map((t) => [t.target, t.measured, t.met ? 'met' : 'MISSED']))}\n`);
const ordered = FIGURE_IDS.filter((id) => id in figures);
console.log(table(['Figure', 'Value'], ordered.map((id) => [id, String(figures[id])])));
console.log(`\n${host.cores} cores · ${host.cpu} · Node ${host.node} · ${host.date} · ${elapsedS.toFixed(0)} s`);

const results = { figures: Object.fromEntries(ordered.map((id) => [id, figures[id]!])), details };
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results.json');
if (errors.length > 0) {
  console.error(`${errors.length} figure(s) errored: ${errors.map((e) => e.figure).join(', ')}`);
  process.exit(1);
}
