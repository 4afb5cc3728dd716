// `catalog push --state` / `stock push --state`: the whole file read and judged first, as a push
// without a state does, then only what changed sent through the delta sync (docs/sync.md), with
// progress, an errors file, the summary, and `--deactivate-missing` behind the guard.
import { setFlagsFromString } from 'node:v8';
import type { IntegrationClient } from '../index.ts';
import type { CatalogSyncResult, StockSyncResult, Sync, SyncProgress } from '../sync/index.ts';
import { UsageError } from './config.ts';
import { ErrorsFile } from './errors-file.ts';
import { fileEncoding, formatOf, readItems, repeatKey, repeatMessage, type InputFormat, type PushKind, type ReadOptions } from './input.ts';
import { RepeatScreen } from './repeats.ts';
import { checkOutputPaths } from './output-paths.ts';
import type { SyncPushOptions } from './push-options.ts';
import { openSync, syncFailure, syncStateOption } from './sync-commands.ts';
import { deactivateMissing, deactivationCounts, deactivationNotes, type Deactivation } from './sync-deactivation.ts';
import { redact } from './failure.ts';

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

/**
 * Pass 1, as a push without a state (push.ts): the whole file is read before the state is opened or
 * anything is sent, so a record the format cannot read (line 2,802 of 3,000) stops the push with
 * nothing sent, as its message says; and its keys are screened for the duplicate rule of pass 2.
 */
async function readWholeFile(file: string, kind: PushKind, format: InputFormat, reading: ReadOptions): Promise<RepeatScreen> {
  const repeats = new RepeatScreen();
  try {
    for await (const record of readItems(file, kind, format, reading)) {
      // Reading is the check: readItems throws UsageError at the first record it cannot read.
      if (record.external_id !== '') repeats.screen(repeatKey(kind, record));
    }
  } catch (error) {
    throw error instanceof UsageError ? error : new UsageError(`Cannot read ${file}: check the path and its permissions.`);
  }
  return repeats;
}

/** `catalog push --state` / `stock push --state`: returns the exit code (0 ok, 1 items failed, 2 could not run, 130 interrupted). */
export async function syncPush(client: (() => IntegrationClient) | undefined, kind: PushKind, file: string, options: SyncPushOptions): Promise<number> {
  const location = syncStateOption(options.state)!;
  const command = kind === 'catalog' ? 'catalog push' : 'stock push';
  if (!client) throw new UsageError(`${command} --state needs the key, even with --dry-run: the state is kept per service, merchant and key scope (set INTEGRATION_API_KEY).`);
  if (options.confirmDeactivate !== undefined && !options.deactivateMissing) {
    throw new UsageError('--confirm-deactivate goes with --deactivate-missing: it confirms how many missing items to deactivate (nothing was sent).');
  }
  const format = formatOf(file, options.format);
  const reading: ReadOptions = { encoding: await fileEncoding(file, format, options.encoding, (line) => console.error(line)), delimiter: options.delimiter };
  const errorsPath = options.errors ?? `${file}.errors.csv`;
  await checkOutputPaths(file, errorsPath, undefined);
  const repeats = await readWholeFile(file, kind, format, reading);
  if (options.resume && !options.json) console.log(`${command}: with --state, every acknowledged and unchanged item is skipped by the state itself; the whole file is read again.`);

  // As a push without a state (push.ts): hold V8's young generation at its size so far, so that a
  // long run over a large file does not keep growing it (the run itself keeps nothing per item).
  setFlagsFromString('--semi-space-growth-factor=1');
  const sync = await openSync(client(), location, options.maxAge);
  const push = new SyncPushRun(sync, { kind, command, file, format, reading, repeats, errorsPath, location, options });
  try {
    return await push.run();
  } finally {
    await sync.close();
  }
}

interface SyncPushPlan {
  kind: PushKind;
  command: string;
  file: string;
  format: InputFormat;
  reading: ReadOptions;
  /** The file's keys screened in pass 1: the duplicate rule, as a push without a state applies it. */
  repeats: RepeatScreen;
  errorsPath: string;
  location: string;
  options: SyncPushOptions;
}

/** One push through the sync, in the order it happens: the run, the errors file, deactivation, the summary. */
class SyncPushRun {
  readonly #sync: Sync;
  readonly #plan: SyncPushPlan;
  readonly #errors: ErrorsFile;
  readonly #lines = new Lines();
  readonly #controller = new AbortController();
  /** Records rejected before the sync saw them (unreadable, or repeating an earlier line). */
  #rejectedByFile = 0;
  #interrupted = false;
  #lastShown = 0;
  #latest: SyncProgress | undefined;

  constructor(sync: Sync, plan: SyncPushPlan) {
    this.#sync = sync;
    this.#plan = plan;
    this.#errors = new ErrorsFile(plan.errorsPath, false);
  }

  async run(): Promise<number> {
    const { command, options } = this.#plan;
    process.on('SIGINT', this.#onSigint);
    try {
      const result = options.resume ? await waitingForLease(() => this.#start(), command, options.json === true, this.#controller.signal) : await this.#start();
      // The last progress, whatever the throttle held back: a short run's only line said "done 0".
      if (this.#latest) this.#show(this.#latest, true);
      this.#writeFailed(result);
      if (options.dryRun) return this.#dryRunReport(result);
      const deactivation = options.deactivateMissing ? await deactivateMissing(this.#sync, this.#plan.kind, options.confirmDeactivate, this.#errors) : undefined;
      this.#summary(result, deactivation);
      if (deactivation?.refused) {
        console.error(deactivation.refused);
        return 2;
      }
      const notes = deactivation ? deactivationNotes(deactivation, { kind: this.#plan.kind, missing: result.orphans ?? 0, errorsPath: this.#plan.errorsPath, stateOption: options.state ? ` --state ${redactLocation(options.state)}` : '' }) : [];
      for (const note of notes) console.error(note);
      // A confirmed deactivation that did not happen is not a success.
      return result.errors + this.#rejectedByFile > 0 || notes.length > 0 ? 1 : 0;
    } catch (error) {
      if (this.#interrupted) {
        console.error(`Interrupted: what the service acknowledged is recorded in ${redactLocation(this.#plan.location)}; run the same command again to send the rest.`);
        return 130;
      }
      const { message, code } = syncFailure(error);
      console.error(`${command} stopped: ${redact(message)} (what was acknowledged is recorded; run the same command again to send the rest).`);
      return code;
    } finally {
      process.off('SIGINT', this.#onSigint);
      await this.#errors.close();
    }
  }

  readonly #onSigint = () => {
    if (this.#interrupted) process.exit(130);
    this.#interrupted = true;
    process.stderr.write('Stopping: what the service acknowledged is kept, the rest is sent by the next run (Ctrl-C again to exit at once).\n');
    this.#controller.abort(new Error('interrupted'));
  };

  #start(): Promise<CatalogSyncResult | StockSyncResult> {
    const { kind, options } = this.#plan;
    const runOptions = { dryRun: options.dryRun === true, full: options.full, signal: this.#controller.signal, concurrency: options.concurrency, onProgress: (p: SyncProgress) => this.#show(p) };
    return kind === 'catalog' ? this.#sync.catalog(this.#items(), runOptions) : this.#sync.stock(this.#items(), runOptions);
  }

  /**
   * The file's items, a record the format cannot use going to the errors file with its line. A
   * repeat is judged here, as a push without a state judges it (naming the first line, not the
   * sync's index), so the errors file says the same with or without a state. The SDK's item checks
   * stay the sync's: an item that fails them is still marked seen by the run, so an item acknowledged
   * before and now rejected (a typo in its price) is not taken for one that left the file.
   */
  async *#items(): AsyncGenerator<never> {
    const { file, kind, format, reading, repeats } = this.#plan;
    const firstLine = repeats.rule();
    for await (const record of readItems(file, kind, format, reading)) {
      const first = record.external_id === '' ? undefined : firstLine(repeatKey(kind, record), record.line);
      if (record.item === undefined || first !== undefined) {
        this.#rejectedByFile++;
        const message = first !== undefined ? repeatMessage(kind, first) : (record.error?.message ?? 'unreadable item');
        this.#errors.write({ line: record.line, external_id: record.external_id, store_id: record.store_id, code: 'VALIDATION_ERROR', message });
        continue;
      }
      this.#lines.push(record.line);
      yield record.item as never;
    }
  }

  #show(progress: SyncProgress, force = false): void {
    this.#latest = progress;
    const now = Date.now();
    if (!force && now - this.#lastShown < 1000) return;
    this.#lastShown = now;
    const { kind, command, options } = this.#plan;
    const rejectedByFile = this.#rejectedByFile;
    const counts = { done: progress.itemsDone + rejectedByFile, unchanged: progress.unchanged, sent: progress.sent, ...(kind === 'catalog' ? { created: progress.created ?? 0 } : {}), updated: progress.updated, errors: progress.errors + rejectedByFile };
    if (options.json) process.stdout.write(`${JSON.stringify({ event: 'progress', ...counts })}\n`);
    else process.stderr.write(`${command}: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
  }

  #writeFailed(result: CatalogSyncResult | StockSyncResult): void {
    for (const failed of result.results) {
      const storeId = (failed as { store_id?: string }).store_id ?? '';
      this.#errors.write({ line: this.#lines.at(failed.index), external_id: failed.external_id, store_id: storeId, code: failed.error?.code ?? 'UNKNOWN', message: failed.error?.message ?? `status ${failed.status}` });
    }
  }

  #dryRunReport(result: CatalogSyncResult | StockSyncResult): number {
    const { errorsPath, options } = this.#plan;
    const total = result.total + this.#rejectedByFile;
    const errorCount = result.errors + this.#rejectedByFile;
    const errorsFile = this.#errors.count > 0 ? errorsPath : null;
    if (options.json) console.log(JSON.stringify({ dry_run: true, items: total, changed: result.sent, unchanged: result.unchanged, rejected: errorCount, errors_file: errorsFile }));
    else console.log(`Dry run: ${result.sent} of ${total} changed (would be sent), ${result.unchanged} unchanged, ${errorCount} rejected locally${errorsFile ? ` (see ${errorsFile})` : ''}. Nothing was sent.`);
    return errorCount > 0 ? 1 : 0;
  }

  #summary(result: CatalogSyncResult | StockSyncResult, deactivation: Deactivation | undefined): void {
    const { kind, command, errorsPath, options } = this.#plan;
    const total = result.total + this.#rejectedByFile;
    const summary = { items: total, unchanged: result.unchanged, sent: result.sent, ...(kind === 'catalog' ? { created: (result as CatalogSyncResult).created } : {}), updated: result.updated, errors: result.errors + this.#rejectedByFile, orphans: result.orphans };
    const errorsFile = this.#errors.count > 0 ? errorsPath : null;
    if (options.json) {
      const deactivated =
        deactivation === undefined
          ? {}
          : {
              deactivated: deactivation.deactivated,
              deactivation_failed: deactivation.failed,
              deactivation_skipped: deactivation.skipped.length,
              ...(deactivation.refused ? { deactivation_refused: deactivation.refused } : {}),
            };
      console.log(JSON.stringify({ event: 'done', command, complete: true, run_id: result.runId, ...summary, ...deactivated, errors_file: errorsFile }));
      return;
    }
    const parts = Object.entries(summary).filter(([k]) => k !== 'items' && k !== 'orphans').map(([k, v]) => `${k} ${v}`);
    const deactivated = deactivation === undefined ? '' : ` ${deactivationCounts(deactivation)}`;
    const missing = result.orphans ? `, ${result.orphans} missing from this file${deactivated}` : '';
    console.log(`${command}: ${total} items, ${parts.join(', ')}${missing}${errorsFile ? `; rejected items in ${errorsFile}` : ''}`);
  }
}

/** The longest a resumed push waits for a dead run's lease: its 60 s, and a little more. */
const LEASE_WAIT_MS = 65_000;
const LEASE_POLL_MS = 2_000;

/**
 * `--resume` right after a crash on another host: the dead run's lease still holds the kind for up
 * to 60 s (on this host it is taken at once). Rather than fail, the resumed push waits for it
 * (saying so), then starts; any other error is thrown.
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
