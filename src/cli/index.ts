#!/usr/bin/env node
// `npx integration-sdk`: the operator's command line (docs/cli.md). Exit codes: 0 all succeeded,
// 1 the command ran but something failed, 2 it could not run, 130 interrupted.
import { Command, InvalidArgumentError, Option } from 'commander';
import { VERSION } from '../index.ts';
import { clientFrom, loadDotEnv, UsageError, type ConnectionOptions } from './config.ts';
import { formatChecks, runDoctor } from './doctor.ts';
import { doctorChecks } from './doctor-tenants.ts';
import { failure, redact } from './failure.ts';
import { inboxReconcile, type InboxReconcileOptions } from './inbox-reconcile.ts';
import { inboxReconcileTenants } from './inbox-reconcile-tenants.ts';
import { tenantOption } from './inbox-store.ts';
import { DELIMITER_NAMES } from './csv-input.ts';
import { push, type PushClient, type PushOptions } from './push.ts';
import type { DashboardCommandOptions } from './dashboard.ts';
import { defineSandboxCommand } from './sandbox.ts';
import * as service from './service-commands.ts';
import { addSyncPushOptions, registerSyncCommands, syncStateOption, type SyncPushOptions } from './sync-commands.ts';
import { registerTenantsCommands } from './tenants-commands.ts';
import { hideSqliteExperimentalWarning } from './sqlite-warning.ts';
import { webhooksRotate, type WebhooksRotateOptions } from './webhooks-rotate.ts';

function integer(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`);
    return Number(value);
  };
}

function connection(command: Command): ConnectionOptions {
  return command.optsWithGlobals<ConnectionOptions>();
}

let exitCode = 0;
const run = <Args extends unknown[]>(action: (...args: Args) => Promise<number>) =>
  async (...args: Args): Promise<void> => {
    exitCode = await action(...args);
  };

const program = new Command('integration-sdk')
  .description('Integration API v1 from the command line: push catalog and stock files, check a setup, manage webhooks and the inbox.')
  .version(VERSION, '-v, --version')
  .option('--api-key-file <path>', 'read the API key from this file (default: INTEGRATION_API_KEY)')
  .option('--base-url <url>', 'service base URL (default: INTEGRATION_BASE_URL)')
  .configureOutput({
    writeErr: (text) => process.stderr.write(redact(text)),
    writeOut: (text) => process.stdout.write(text),
    // One line: commander's "error: unknown option '--x'" and what to do about it.
    outputError: (text, write) => write(`${text.replace(/^error: /, '').trim().replace(/\.$/, '')}: run with --help for usage.\n`),
  })
  .exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : 2);
  })
  .addHelpText('after', `
Environment: INTEGRATION_API_KEY, INTEGRATION_BASE_URL, INTEGRATION_INBOX_STORE, INTEGRATION_SYNC_STATE, INTEGRATION_TENANTS, INTEGRATION_TENANTS_KEY (a .env file in the working directory is read).
Exit codes: 0 all succeeded, 1 something failed (items rejected, a failed check, dead deliveries), 2 could not run, 130 interrupted.

Example:
  INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=https://platform.example.com integration-sdk doctor`);

program
  .command('doctor')
  .description('check the key, environment, scopes, stores, clock, webhooks and (with --store) the inbox')
  .option('--store <location>', 'inbox store: a SQLite file or a Postgres URL (default: INTEGRATION_INBOX_STORE)')
  .option('--tenants <location>', 'tenants store: also check every tenant (default: INTEGRATION_TENANTS)')
  .option('--max-tenants <n>', 'with --tenants: active tenants whose endpoints are read', integer('--max-tenants', 0))
  .option('--redis <url>', "with --tenants: the Redis the tenants' processes share, for the egress budget's use by all of them (default: INTEGRATION_REDIS_URL)")
  .option('--egress-id <id>', 'with --tenants and --redis: the egress budget to read (default: INTEGRATION_EGRESS_ID, else "default")')
  .option('--json', 'print the checks as JSON')
  .addHelpText('after', '\nExample:\n  integration-sdk doctor --store ./integration-inbox.db')
  .action(run(async (options: { store?: string; tenants?: string; maxTenants?: number; redis?: string; egressId?: string; json?: boolean }, command: Command) => {
    const checks = await doctorChecks({ ...connection(command), ...options }, (single) => runDoctor({ ...single, store: options.store }));
    const failed = checks.some((c) => c.status === 'fail');
    console.log(redact(options.json ? JSON.stringify({ ok: !failed, checks }) : formatChecks(checks, process.stdout.isTTY ? process.stdout.columns : undefined)));
    return failed ? 1 : 0;
  }));

function pushCommand(parent: Command, kind: 'catalog' | 'stock', example: string): void {
  addSyncPushOptions(parent.command('push'))
    .description(`push a ${kind === 'catalog' ? 'catalog (products)' : 'stock and price'} file: CSV, JSON Lines or a JSON array, streamed`)
    .argument('<file>', 'input file')
    .addOption(new Option('--format <format>', 'input format (default: from the extension)').choices(['csv', 'jsonl', 'json']))
    .option('--dry-run', 'validate every item locally and send nothing')
    .option('--resume', 'continue an interrupted push from its checkpoint (<file>.checkpoint.json)')
    .option('--errors <file>', 'CSV of rejected items (default: <file>.errors.csv)')
    .option('--encoding <label>', 'the file\'s text encoding when it is not UTF-8, e.g. latin1 or ibm850 (default: UTF-8; a CSV that is not is read as windows-1252, as Excel saves it, saying so)')
    .addOption(new Option('--delimiter <char>', 'CSV delimiter (default: detected from the header line)').choices(DELIMITER_NAMES))
    .option('--concurrency <n>', 'batches in flight at once', integer('--concurrency', 1, 16), 1)
    .option('--json', 'print NDJSON progress events and a final report')
    .addHelpText('after', `\nExample:\n  ${example}`)
    .action(run(async (file: string, options: PushOptions, command: Command) => {
      const client: PushClient | undefined = options.dryRun && !syncStateOption((options as SyncPushOptions).state) ? undefined : (rateLimit) => clientFrom(connection(command), rateLimit);
      if (client) client(); // fail on a missing key before reading the file
      return push(client, kind, file, options);
    }));
}

/** A group's `--help` shows an example too. */
function group(name: string, description: string, example: string): Command {
  return program.command(name).description(description).addHelpText('after', `\nExample:\n  ${example}`);
}

pushCommand(group('catalog', 'products: catalog push', 'integration-sdk catalog push examples/catalog.csv'), 'catalog', 'integration-sdk catalog push examples/catalog.csv --errors rejected.csv');
pushCommand(group('stock', 'stock and prices: stock push', 'integration-sdk stock push examples/stock.csv'), 'stock', 'integration-sdk stock push examples/stock.csv --resume');

registerSyncCommands(group, run, (command) => clientFrom(connection(command)));
registerTenantsCommands(group, run);

const orders = group('orders', 'read orders: orders get <order_id> | orders find --external-id <id>', 'integration-sdk orders find --external-id MKT-1001');
orders
  .command('get')
  .description('print one order by its order_id')
  .argument('<order_id>')
  .option('--json', 'print JSON on one line')
  .addHelpText('after', '\nExample:\n  integration-sdk orders get ord_123')
  .action(run(async (id: string, options: { json?: boolean }, command: Command) => service.ordersGet(clientFrom(connection(command)), id, options.json)));
orders
  .command('find')
  .description("find the order with a marketplace's external_order_id (exit 1 when none)")
  .requiredOption('--external-id <id>', "the marketplace's external_order_id")
  .option('--json', 'print JSON on one line')
  .addHelpText('after', '\nExample:\n  integration-sdk orders find --external-id MKT-1001')
  .action(run(async (options: { externalId: string; json?: boolean }, command: Command) => service.ordersFind(clientFrom(connection(command)), options.externalId, options.json)));

const webhooks = group('webhooks', 'webhook endpoints: list | create | test | deliveries | delete | rotate', 'integration-sdk webhooks list');
webhooks
  .command('list')
  .description('list the registered endpoints with their events and consecutive_failures')
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExample:\n  integration-sdk webhooks list')
  .action(run(async (options: { json?: boolean }, command: Command) => service.webhooksList(clientFrom(connection(command)), options.json)));
webhooks
  .command('create')
  .description('register an endpoint and print its secret once')
  .requiredOption('--url <url>', 'HTTPS receiver URL')
  .requiredOption('--events <a,b>', 'comma-separated events, e.g. order.created,order.status_changed')
  .option('--json', 'print JSON')
  .addHelpText('after', '\nPrints the new secret once, on stdout: store it now.\nExample:\n  integration-sdk webhooks create --url https://erp.example.com/hooks --events order.created,order.status_changed')
  .action(run(async (options: { url: string; events: string; json?: boolean }, command: Command) => service.webhooksCreate(clientFrom(connection(command)), options.url, options.events, options.json)));
webhooks
  .command('test')
  .description('queue a test delivery to an endpoint')
  .argument('<id>')
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExample:\n  integration-sdk webhooks test wh_123')
  .action(run(async (id: string, options: { json?: boolean }, command: Command) => service.webhooksTest(clientFrom(connection(command)), id, options.json)));
webhooks
  .command('deliveries')
  .description("list an endpoint's latest deliveries, newest first (exit 1 when one is dead)")
  .argument('<id>')
  .option('--limit <n>', 'how many, newest first', integer('--limit', 1, 100))
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExit 1 when a listed delivery is dead.\nExample:\n  integration-sdk webhooks deliveries wh_123 --limit 20')
  .action(run(async (id: string, options: { limit?: number; json?: boolean }, command: Command) => service.webhooksDeliveries(clientFrom(connection(command)), id, options.limit, options.json)));
webhooks
  .command('delete')
  .description('delete an endpoint')
  .argument('<id>')
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExample:\n  integration-sdk webhooks delete wh_123')
  .action(run(async (id: string, options: { json?: boolean }, command: Command) => service.webhooksDelete(clientFrom(connection(command)), id, options.json)));
webhooks
  .command('rotate')
  .description("replace an endpoint's secret: register a second endpoint at its URL (its secret printed once), wait for a test delivery to it, delete the old one")
  .requiredOption('--endpoint <id>', 'the endpoint whose secret is replaced')
  .option('--resume <id>', 'the new endpoint an interrupted rotation printed: start at its test delivery')
  .option('--wait <seconds>', 'how long to wait for the receiver to accept the new secret', integer('--wait', 1, 3600), 60)
  .option('--json', 'print one JSON object per step (the first holds the secret)')
  .addHelpText(
    'after',
    '\nPrints the new secret once, on stdout: add it beside the old one in your receiver while the command waits.\n' +
      'Exit 1 when the receiver did not accept it in time (both endpoints stay; the message says how to resume) or no endpoint slot is free.\n' +
      'Example:\n  integration-sdk webhooks rotate --endpoint wh_123\n  integration-sdk webhooks rotate --endpoint wh_123 --resume wh_456',
  )
  .action(run(async (options: WebhooksRotateOptions, command: Command) => webhooksRotate(clientFrom(connection(command)), options)));

const inbox = group('inbox', 'the durable webhook inbox: stats | dead | retry <delivery_id> | retry-dead | reconcile', 'integration-sdk inbox stats --store ./integration-inbox.db');
for (const [action, description] of [
  ['stats', 'counts by status and the oldest pending age'],
  ['dead', 'list dead entries with their last error'],
  ['retry', 'put one dead or done entry back to pending'],
  ['retry-dead', 'put every dead entry back to pending'],
] as const) {
  const sub = inbox.command(action).description(description);
  if (action === 'retry') sub.argument('<delivery_id>');
  sub
    .option('--store <location>', 'SQLite file or Postgres URL (default: INTEGRATION_INBOX_STORE)')
    .option('--tenant <id>', "only this tenant's entries (an inbox of many merchants)", tenantOption)
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  integration-sdk inbox ${action}${action === 'retry' ? ' 7f9c...' : ''} --store ./integration-inbox.db${action === 'retry' ? '' : ' --tenant loja-42'}`)
    .action(run(async (...args: unknown[]) => {
      type Options = { store?: string; json?: boolean; tenant?: string };
      const [id, options] = action === 'retry' ? [args[0] as string, args[1] as Options] : [undefined, args[0] as Options];
      return service.inboxCommand(action, options.store, id, options.json, options.tenant);
    }));
}

inbox
  .command('reconcile')
  .description('read back stale orders, recover the status changes the webhooks missed, list deliveries that never arrived')
  .option('--store <location>', 'SQLite file or Postgres URL (default: INTEGRATION_INBOX_STORE)')
  .option('--stale-after <minutes>', 'read back orders not heard of for this long', integer('--stale-after', 0), 60)
  .option('--max-reads <n>', 'order reads per run at most', integer('--max-reads', 0), 500)
  .option('--endpoint <ids>', "this inbox's webhook endpoint ids, comma-separated (default: guessed from the deliveries it holds)")
  .option('--ack <delivery_id|all>', 'acknowledge an open missed delivery (or all of them) once dealt with, instead of reconciling')
  .option('--tenants <location>', 'tenants store (an inbox of many merchants): reconcile every active tenant within --max-reads (key from INTEGRATION_TENANTS_KEY)')
  .option('--json', 'print the report as JSON')
  .addHelpText('after', '\nExit 1 when it found missed deliveries not reported before or missed deliveries remain open, 2 when it could not run. Meant for a scheduler (cron, every 15 minutes).\nExample:\n  integration-sdk inbox reconcile --store ./integration-inbox.db --stale-after 60 --max-reads 500\n  integration-sdk inbox reconcile --store ./integration-inbox.db --ack 7f9c0d2e-...\n  INTEGRATION_TENANTS_KEY=... integration-sdk inbox reconcile --store ./integration-inbox.db --tenants ./tenants.db')
  .action(run(async (options: InboxReconcileOptions & { tenants?: string }, command: Command) => {
    if (options.tenants !== undefined && options.ack === undefined) {
      if (options.endpoint !== undefined) throw new UsageError('--endpoint names a single merchant\'s endpoints: with --tenants each tenant\'s endpoints come from the registry.');
      return inboxReconcileTenants({ ...connection(command), ...options, tenants: options.tenants });
    }
    return inboxReconcile(() => clientFrom(connection(command)), options);
  }));

defineSandboxCommand(program.command('sandbox'), run);

program
  .command('dashboard')
  .description('serve the operator\'s dashboard over an inbox store, on 127.0.0.1 with a one-time sign-in link')
  .option('--store <location>', 'inbox store: a SQLite file or a Postgres URL (default: INTEGRATION_INBOX_STORE)')
  .option('--state <location>', 'sync state: a SQLite file or a Postgres URL (the sync panel)')
  .option('--tenants <location>', 'tenants store: a SQLite file or a Postgres URL (the Tenants page and a tenant filter; default: INTEGRATION_TENANTS; key from INTEGRATION_TENANTS_KEY)')
  .option('--port <n>', 'TCP port', integer('--port', 0, 65535), 4545)
  .option('--bind <address>', 'listen address (default 127.0.0.1); another one needs --token-file or DASHBOARD_TOKEN')
  .option('--token-file <path>', 'read the sign-in token from this file (default: DASHBOARD_TOKEN, else a random one-time token)')
  .addHelpText('after', '\nExample:\n  integration-sdk dashboard --store ./integration-inbox.db --port 4545')
  .action(async (options: DashboardCommandOptions, command: Command) => {
    // Loaded only for this command: the web framework need not slow every other one down.
    const { runDashboard } = await import('./dashboard.ts');
    await runDashboard({ ...connection(command), ...options });
    exitCode = -1; // keeps running until a signal
  });

async function main(): Promise<void> {
  hideSqliteExperimentalWarning();
  const argv = process.argv.slice(2);
  // An option meant for the key, or an argument that is one (`service_<key_id>_<secret>`).
  if (argv.some((arg) => /^--(api-key|api_key|apikey|key|token)(=|$)/.test(arg) || /^service_[^_\s]+_\S+$/.test(arg))) {
    process.stderr.write('The API key is never taken as an argument (it would show in ps and shell history): set INTEGRATION_API_KEY or pass --api-key-file <path>.\n');
    process.exit(2);
  }
  try {
    loadDotEnv();
  } catch {
    process.stderr.write('Cannot read .env in the working directory: fix or remove it.\n');
    process.exit(2);
  }
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    const { message, code } = failure(error);
    process.stderr.write(`${redact(message)}\n`);
    process.exit(code);
  }
  if (exitCode >= 0) process.exitCode = exitCode;
}

await main();
