// The delta sync on the command line: `catalog push` / `stock push` with `--state` send only what
// changed (docs/sync.md), and `sync runs` / `sync forget` read and clear the state. The state's
// location is a SQLite file or a Postgres URL (which may carry a password: INTEGRATION_SYNC_STATE).
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { IntegrationClient } from '../index.ts';
import type { CatalogSyncResult, StockSyncResult, Sync, SyncProgress, SyncState } from '../sync/index.ts';
import { UsageError } from './config.ts';
import { ErrorsFile } from './errors-file.ts';
import { failure as describeFailure, redact, SYNC_STATE } from './failure.ts';
import { formatOf, readItems, type PushKind } from './input.ts';
import type { PushOptions } from './push.ts';

/** The push options the sync adds. */
export interface SyncPushOptions extends PushOptions {
  state?: string;
  full?: boolean;
  maxAge?: number;
  deactivateMissing?: boolean;
}

/** The state location from `--state` or INTEGRATION_SYNC_STATE; `undefined` when neither is set. */
export function syncStateOption(option: string | undefined): string | undefined {
  const location = option ?? process.env.INTEGRATION_SYNC_STATE;
  return location === undefined || location === '' ? undefined : location;
}

function days(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !(parsed >= 0)) throw new InvalidArgumentError('--max-age must be a number of days ≥ 0 (0 resends everything).');
  return parsed;
}

/** Adds `--state`, `--full`, `--max-age` and `--deactivate-missing` to a push command. */
export function addSyncPushOptions(command: Command): Command {
  return command
    .option('--state <location>', 'delta sync: a SQLite file or a Postgres URL holding what was acknowledged; only changed items are sent (default: INTEGRATION_SYNC_STATE)')
    .option('--full', 'with --state: send everything and refresh the state')
    .option('--max-age <days>', 'with --state: also send items not sent for this many days', days)
    .option('--deactivate-missing', 'with --state: after a complete run, send active: false for items acknowledged before and missing from this file');
}

/** Loaded on use: a push without a state, and every other command, pay nothing for the sync. */
async function openSync(client: IntegrationClient, location: string, maxAgeDays?: number): Promise<Sync> {
  const { createSync } = await import('../sync/index.ts');
  return createSync({ client, state: await openSyncState(location), maxAgeDays });
}

export async function openSyncState(location: string): Promise<SyncState> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const { postgresSyncState } = await import('../sync/postgres/index.ts');
    return postgresSyncState({ connectionString: location });
  }
  const { sqliteSyncState } = await import('../sync/sqlite/index.ts');
  return sqliteSyncState({ path: location });
}

/** Where each fed item came from: its line, in a typed array that grows (4 bytes an item). */
class Lines {
  #lines = new Uint32Array(1024);
  length = 0;
  push(line: number): void {
    if (this.length === this.#lines.length) {
      const grown = new Uint32Array(this.#lines.length * 2);
      grown.set(this.#lines);
      this.#lines = grown;
    }
    this.#lines[this.length++] = line;
  }
  at(index: number): number {
    return this.#lines[index] ?? 0;
  }
}

/** `catalog push --state` / `stock push --state`: returns the exit code (0 ok, 1 items failed, 2 could not run, 130 interrupted). */
export async function syncPush(client: (() => IntegrationClient) | undefined, kind: PushKind, file: string, options: SyncPushOptions): Promise<number> {
  const location = syncStateOption(options.state)!;
  const command = kind === 'catalog' ? 'catalog push' : 'stock push';
  if (!client) throw new UsageError(`${command} --state needs the key, even with --dry-run: the state is kept per service, merchant and key scope (set INTEGRATION_API_KEY).`);
  const format = formatOf(file, options.format);
  const errorsPath = options.errors ?? `${file}.errors.csv`;
  const json = options.json === true;
  const dryRun = options.dryRun === true;
  if (options.resume && !json) console.log(`${command}: with --state, every acknowledged and unchanged item is skipped by the state itself; the whole file is read again.`);

  // As a push without a state (push.ts): hold V8's young generation at its size so far, so that a
  // long run over a large file does not keep growing it (the run itself keeps nothing per item).
  setFlagsFromString('--semi-space-growth-factor=1');
  const sync = await openSync(client(), location, options.maxAge);
  const controller = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write('Stopping: what the service acknowledged is kept, the rest is sent by the next run (Ctrl-C again to exit at once).\n');
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSigint);

  const errors = new ErrorsFile(errorsPath, false);
  const lines = new Lines();
  let unreadable = 0;
  async function* items(): AsyncGenerator<never> {
    for await (const record of readItems(file, kind, format)) {
      if (record.item === undefined) {
        unreadable++;
        errors.write({ line: record.line, external_id: record.external_id, store_id: record.store_id, code: record.error?.code ?? 'VALIDATION_ERROR', message: record.error?.message ?? 'unreadable item' });
        continue;
      }
      lines.push(record.line);
      yield record.item as never;
    }
  }

  let lastShown = 0;
  let latest: SyncProgress | undefined;
  const show = (progress: SyncProgress, force = false) => {
    latest = progress;
    const now = Date.now();
    if (!force && now - lastShown < 1000) return;
    lastShown = now;
    const counts = { done: progress.itemsDone + unreadable, unchanged: progress.unchanged, sent: progress.sent, ...(kind === 'catalog' ? { created: progress.created ?? 0 } : {}), updated: progress.updated, errors: progress.errors + unreadable };
    if (json) process.stdout.write(`${JSON.stringify({ event: 'progress', ...counts })}\n`);
    else process.stderr.write(`${command}: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
  };

  try {
    const runOptions = { dryRun, full: options.full, signal: controller.signal, concurrency: options.concurrency, onProgress: (p: SyncProgress) => show(p) };
    const start = (): Promise<CatalogSyncResult | StockSyncResult> => (kind === 'catalog' ? sync.catalog(items(), runOptions) : sync.stock(items(), runOptions));
    const result = options.resume ? await waitingForLease(start, command, json, controller.signal) : await start();
    // The last progress, whatever the throttle held back: a short run's only line said "done 0".
    if (latest) show(latest, true);
    for (const failed of result.results) {
      const storeId = (failed as { store_id?: string }).store_id ?? '';
      errors.write({ line: lines.at(failed.index), external_id: failed.external_id, store_id: storeId, code: failed.error?.code ?? 'UNKNOWN', message: failed.error?.message ?? `status ${failed.status}` });
    }
    const total = result.total + unreadable;
    const errorCount = result.errors + unreadable;
    if (dryRun) {
      const report = { dry_run: true, items: total, changed: result.sent, unchanged: result.unchanged, rejected: errorCount, errors_file: errors.count > 0 ? errorsPath : null };
      if (json) console.log(JSON.stringify(report));
      else console.log(`Dry run: ${result.sent} of ${total} changed (would be sent), ${result.unchanged} unchanged, ${errorCount} rejected locally${errors.count > 0 ? ` (see ${errorsPath})` : ''}. Nothing was sent.`);
      return errorCount > 0 ? 1 : 0;
    }
    let deactivated: number | undefined;
    if (options.deactivateMissing) {
      const outcome = await sync.deactivate(kind, sync.orphans(kind));
      deactivated = outcome.deactivated;
      for (const failed of outcome.results) errors.write({ line: 0, external_id: failed.external_id, store_id: failed.store_id ?? '', code: failed.error.code, message: `deactivate: ${failed.error.message}` });
    }
    const summary = { items: total, unchanged: result.unchanged, sent: result.sent, ...(kind === 'catalog' ? { created: (result as { created: number }).created } : {}), updated: result.updated, errors: errorCount, orphans: result.orphans };
    if (json) console.log(JSON.stringify({ event: 'done', command, complete: true, run_id: result.runId, ...summary, ...(deactivated === undefined ? {} : { deactivated }), errors_file: errors.count > 0 ? errorsPath : null }));
    else {
      const parts = Object.entries(summary).filter(([k]) => k !== 'items' && k !== 'orphans').map(([k, v]) => `${k} ${v}`);
      console.log(`${command}: ${total} items, ${parts.join(', ')}${result.orphans ? `, ${result.orphans} missing from this file${deactivated === undefined ? '' : ` (${deactivated} deactivated)`}` : ''}${errors.count > 0 ? `; rejected items in ${errorsPath}` : ''}`);
    }
    return errorCount > 0 ? 1 : 0;
  } catch (error) {
    if (interrupted) {
      console.error(`Interrupted: what the service acknowledged is recorded in ${redactLocation(location)}; run the same command again to send the rest.`);
      return 130;
    }
    const { message, code } = describeFailure(error, SYNC_STATE);
    console.error(`${command} stopped: ${redact(message)} (what was acknowledged is recorded; run the same command again to send the rest).`);
    return code;
  } finally {
    process.off('SIGINT', onSigint);
    await errors.close();
    await sync.close();
  }
}

/** The longest a resumed push waits for a dead run's lease: its 60 s, and a little more. */
const LEASE_WAIT_MS = 65_000;
const LEASE_POLL_MS = 2_000;

/**
 * `--resume` right after a crash: the dead run's lease still holds the kind for up to 60 s. Rather
 * than fail, the resumed push waits for it (saying so), then starts; any other error is thrown.
 */
async function waitingForLease<T>(start: () => Promise<T>, command: string, json: boolean, signal: AbortSignal): Promise<T> {
  const deadline = Date.now() + LEASE_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      return await start();
    } catch (error) {
      const held = (error as { name?: unknown })?.name === 'SyncRunInProgressError';
      if (!held || Date.now() >= deadline) throw error;
      if (!told && !json) {
        const { runId, startedAt } = error as { runId: string; startedAt: Date };
        process.stderr.write(`${command}: run ${runId} (started ${startedAt.toISOString()}) still holds the lease; if its process died, it frees within 60 s. Waiting...\n`);
      }
      told = true;
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
      signal.throwIfAborted();
    }
  }
}

/** A Postgres URL without its password, for messages. */
function redactLocation(location: string): string {
  try {
    const url = new URL(location);
    if (url.password) url.password = '***';
    return url.protocol.startsWith('postgres') ? url.href : location;
  } catch {
    return location;
  }
}

/** The state of `sync runs` / `sync forget`: these read an existing one, and never create a file for a mistyped path. */
function requireState(option: string | undefined): string {
  const location = syncStateOption(option);
  if (!location) throw new UsageError('No sync state: pass --state <sqlite file | postgres URL> or set INTEGRATION_SYNC_STATE (use the variable for a Postgres URL with a password).');
  if (!/^postgres(ql)?:\/\//.test(location) && !existsSync(location)) {
    throw new UsageError(`No sync state at ${location}: check the path given to --state (a push with --state creates it).`);
  }
  return location;
}

/** `sync runs`: the history, newest first. Needs no key. */
async function syncRuns(options: { state?: string; limit?: number; json?: boolean }): Promise<number> {
  const state = await openSyncState(requireState(options.state));
  try {
    const runs = await state.runs(options.limit ?? 20);
    if (options.json) {
      for (const run of runs) {
        const { scope: _scope, seq: _seq, ...shown } = run;
        console.log(JSON.stringify({ ...shown, startedAt: new Date(run.startedAt).toISOString(), finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString() }));
      }
      return 0;
    }
    if (runs.length === 0) {
      console.log('No sync runs recorded yet.');
      return 0;
    }
    for (const run of runs) {
      const counts = [`total ${run.total}`, `unchanged ${run.unchanged}`, `sent ${run.sent}`, ...(run.created === undefined ? [] : [`created ${run.created}`]), `updated ${run.updated}`, `errors ${run.errors}`];
      if (run.orphans !== null) counts.push(`orphans ${run.orphans}`);
      console.log(`${new Date(run.startedAt).toISOString()}  ${run.kind.padEnd(7)}  ${run.outcome.padEnd(11)}  ${run.runId}  ${counts.join(', ')}${run.error ? `  (${run.error})` : ''}`);
    }
    return 0;
  } finally {
    await state.close();
  }
}

/** `sync forget catalog|stock [--external-id id]`: needs the key, for the scope. */
async function syncForget(client: IntegrationClient, kind: string, options: { state?: string; externalId?: string[]; json?: boolean }): Promise<number> {
  if (kind !== 'catalog' && kind !== 'stock') throw new UsageError(`sync forget takes catalog or stock, not ${JSON.stringify(kind)}.`);
  const sync = await openSync(client, requireState(options.state));
  try {
    const forgotten = await sync.forget(kind, options.externalId ? { externalIds: options.externalId } : undefined);
    if (options.json) console.log(JSON.stringify({ kind, forgotten }));
    else console.log(`Forgot ${forgotten} ${kind} item${forgotten === 1 ? '' : 's'}: ${forgotten === 0 ? 'nothing changes' : 'the next push sends them again'}.`);
    return 0;
  } finally {
    await sync.close();
  }
}

/** Registers `sync runs` and `sync forget`. */
export function registerSyncCommands(
  group: (name: string, description: string, example: string) => Command,
  run: <Args extends unknown[]>(action: (...args: Args) => Promise<number>) => (...args: Args) => Promise<void>,
  clientOf: (command: Command) => IntegrationClient,
): void {
  const sync = group('sync', 'the delta sync state: runs | forget catalog|stock', 'integration-sdk sync runs --state ./integration-state.db');
  sync
    .command('runs')
    .description('list the sync runs recorded in the state, newest first')
    .option('--state <location>', 'SQLite file or Postgres URL (default: INTEGRATION_SYNC_STATE)')
    .option('--limit <n>', 'how many', (value: string) => {
      if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('--limit must be a whole number ≥ 1.');
      return Number(value);
    })
    .option('--json', 'print one JSON object per run')
    .addHelpText('after', '\nExample:\n  integration-sdk sync runs --state ./integration-state.db --limit 10')
    .action(run(async (options: { state?: string; limit?: number; json?: boolean }) => syncRuns(options)));
  sync
    .command('forget')
    .description('forget what was acknowledged (all of a kind, or some external_ids): the next push sends it again')
    .argument('<kind>', 'catalog or stock')
    .option('--external-id <id...>', 'only these external_ids (stock: every store of each)')
    .option('--state <location>', 'SQLite file or Postgres URL (default: INTEGRATION_SYNC_STATE)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  integration-sdk sync forget catalog --external-id SKU-1 --state ./integration-state.db')
    .action(run(async (kind: string, options: { state?: string; externalId?: string[]; json?: boolean }, command: Command) => syncForget(clientOf(command), kind, options)));
}
