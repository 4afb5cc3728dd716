// The delta sync on the command line: the push options it adds (a push with `--state` is run by
// sync-push.ts), where its state is and how its failures are named, and `sync runs` / `sync forget`,
// which read and clear the state. The state's location is a SQLite file or a Postgres URL (which may
// carry a password: INTEGRATION_SYNC_STATE).
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { IntegrationClient } from '../index.ts';
import type { Sync, SyncRunRecord, SyncState } from '../sync/index.ts';
import { UsageError } from './config.ts';
import { failure as describeFailure, redact, storeFailure, SYNC_STATE } from './failure.ts';
import { isSqliteBusy } from '../storage/sqlite.ts';
import { table, terminalWidth, type Column } from './table.ts';

export type { SyncPushOptions } from './push-options.ts';

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

function count(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('--confirm-deactivate must be the whole number of missing items the push said it would deactivate.');
  return Number(value);
}

/** Adds `--state`, `--full`, `--max-age`, `--deactivate-missing` and `--confirm-deactivate` to a push command. */
export function addSyncPushOptions(command: Command): Command {
  return command
    .option('--state <location>', 'delta sync: a SQLite file or a Postgres URL holding what was acknowledged; only changed items are sent (default: INTEGRATION_SYNC_STATE)')
    .option('--full', 'with --state: send everything and refresh the state')
    .option('--max-age <days>', 'with --state: also send items not sent for this many days', days)
    .option('--deactivate-missing', 'with --state: after a complete run, send active: false for items acknowledged before and missing from this file (more than 10% of them, or all of them after an empty file, only with --confirm-deactivate)')
    .option('--confirm-deactivate <n>', 'with --deactivate-missing: the exact number of missing items to deactivate, as a refused push stated it', count);
}

/** Loaded on use: a push without a state, and every other command, pay nothing for the sync. */
export async function openSync(client: IntegrationClient, location: string, maxAgeDays?: number): Promise<Sync> {
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

/**
 * A sync command's failure in one sentence and its exit code, naming the sync state (`--state`,
 * INTEGRATION_SYNC_STATE) when the state is what failed, never the inbox's store.
 */
export function syncFailure(error: unknown): { message: string; code: number } {
  if ((error as { name?: unknown })?.name === 'SyncStateError') {
    const { message, cause } = error as Error;
    // The library's sentence names the state (the file, or Postgres's host, database and schema)
    // and what to do: kept, unless the location itself is in doubt (it cannot be opened or
    // reached), where the CLI points back at --state / INTEGRATION_SYNC_STATE instead. A locked
    // file is not such a case: its sentence names the file and how long it waited.
    return { message: isSqliteBusy(cause) ? message : (storeFailure(cause, SYNC_STATE) ?? message), code: 2 };
  }
  return describeFailure(error, SYNC_STATE);
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

/** Runs `sync runs` / `sync forget`, saying a failure in one sentence that names the sync state. */
async function namingTheState(action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (error) {
    const { message, code } = syncFailure(error);
    console.error(redact(message));
    return code;
  }
}

/** A run's start to the second, in UTC: what tells runs apart for people. */
const startedAt = (run: SyncRunRecord) => `${run.startedAt.toISOString().slice(0, 19)}Z`;
const counted = (value: number | null | undefined) => (value === null || value === undefined ? '' : String(value));

/**
 * `sync runs` for people: when, which kind, how it ended and what it sent are kept on a narrow
 * terminal; the run id (for `sync.runErrors` and the dashboard, whole in `--json`) and the counts
 * that matter less go first, then the error is cut.
 */
const RUN_COLUMNS: Column<SyncRunRecord>[] = [
  { header: 'started_at', value: startedAt },
  { header: 'kind', value: (run) => run.kind },
  { header: 'outcome', value: (run) => run.outcome },
  { header: 'total', value: (run) => counted(run.total), optional: 4 },
  { header: 'unchanged', value: (run) => counted(run.unchanged) },
  { header: 'sent', value: (run) => counted(run.sent) },
  { header: 'created', value: (run) => counted(run.created), optional: 1 },
  { header: 'updated', value: (run) => counted(run.updated), optional: 2 },
  { header: 'errors', value: (run) => counted(run.errors) },
  { header: 'orphans', value: (run) => counted(run.orphans), optional: 0 },
  { header: 'run_id', value: (run) => run.runId, optional: 3 },
  { header: 'error', value: (run) => run.error ?? '', kind: 'text', min: 20 },
];

/** With `--all-scopes`: whose runs they are. */
const SCOPE_COLUMNS: Column<SyncRunRecord>[] = [
  { header: 'merchant_id', value: (run) => run.merchantId, optional: 5 },
  { header: 'base_url', value: (run) => run.baseUrl, optional: -1 },
];

interface RunsOptions {
  state?: string;
  limit?: number;
  json?: boolean;
  allScopes?: boolean;
}

/** The runs of the key's scope (one health() call), or of every scope without a key. */
async function runsOf(location: string, client: (() => IntegrationClient) | undefined, limit: number): Promise<SyncRunRecord[]> {
  const runs: SyncRunRecord[] = [];
  if (client) {
    const sync = await openSync(client(), location);
    try {
      for await (const run of sync.runs({ limit })) runs.push(run);
    } finally {
      await sync.close();
    }
    return runs;
  }
  const [state, { recordOf }] = await Promise.all([openSyncState(location), import('../sync/run-record.ts')]);
  try {
    return (await state.runs(limit)).map(recordOf);
  } finally {
    await state.close();
  }
}

/** `sync runs`: the history, newest first, of the key's scope; with `--all-scopes`, of every scope (no key needed). */
async function syncRuns(clientOf: () => IntegrationClient, options: RunsOptions): Promise<number> {
  const location = requireState(options.state);
  let client: (() => IntegrationClient) | undefined;
  if (options.allScopes !== true) {
    let made: IntegrationClient;
    try {
      made = clientOf();
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      throw new UsageError(`${error.message.replace(/\.$/, '')}; sync runs lists the runs of the key's scope (service, merchant, key stores), or every scope's with --all-scopes, which needs no key.`);
    }
    client = () => made;
  }
  return namingTheState(async () => {
    const runs = await runsOf(location, client, options.limit ?? 20);
    if (options.json) {
      for (const run of runs) console.log(JSON.stringify(run));
      return 0;
    }
    if (runs.length === 0) {
      console.log(options.allScopes ? 'No sync runs recorded yet.' : "No sync runs recorded yet for this key's scope (--all-scopes lists every scope's).");
      return 0;
    }
    console.log(table(runs, options.allScopes ? [...RUN_COLUMNS, ...SCOPE_COLUMNS] : RUN_COLUMNS, terminalWidth()));
    return 0;
  });
}

/** `sync forget catalog|stock [--external-id id]`: needs the key, for the scope. */
async function syncForget(client: IntegrationClient, kind: string, options: { state?: string; externalId?: string[]; json?: boolean }): Promise<number> {
  if (kind !== 'catalog' && kind !== 'stock') throw new UsageError(`sync forget takes catalog or stock, not ${JSON.stringify(kind)}.`);
  const location = requireState(options.state);
  return namingTheState(async () => {
    const sync = await openSync(client, location);
    try {
      const forgotten = await sync.forget(kind, options.externalId ? { externalIds: options.externalId } : undefined);
      if (options.json) console.log(JSON.stringify({ kind, forgotten }));
      else console.log(`Forgot ${forgotten} ${kind} item${forgotten === 1 ? '' : 's'}: ${forgotten === 0 ? 'nothing changes' : 'the next push sends them again'}.`);
      return 0;
    } finally {
      await sync.close();
    }
  });
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
    .description("list the sync runs of the key's scope recorded in the state, newest first")
    .option('--state <location>', 'SQLite file or Postgres URL (default: INTEGRATION_SYNC_STATE)')
    .option('--limit <n>', 'how many', (value: string) => {
      if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('--limit must be a whole number ≥ 1.');
      return Number(value);
    })
    .option('--all-scopes', "every scope's runs (every key, merchant and service that used the state); needs no key")
    .option('--json', 'print one JSON object per run')
    .addHelpText('after', '\nExample:\n  integration-sdk sync runs --state ./integration-state.db --limit 10')
    .action(run(async (options: RunsOptions, command: Command) => syncRuns(() => clientOf(command), options)));
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
