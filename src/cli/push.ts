// `catalog push` and `stock push`: validate the whole file first (a malformed file sends nothing),
// then stream it in batches of 500 records through the SDK, with progress, an errors file, an
// atomic checkpoint after every acknowledged batch, and Ctrl-C that lets the batches in flight finish.
import { stat } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import type { IntegrationClient } from '../index.ts';
import { TokenBucket, type RateLimiter } from '../transport/rate-limiter.ts';
import { checkpointPath, CheckpointWriter, fingerprint, loadCheckpoint, type Checkpoint } from './checkpoint.ts';
import { rateLimitFromEnv, UsageError } from './config.ts';
import { failure as describeFailure, redact } from './failure.ts';
import { ErrorsFile, type Rejection } from './errors-file.ts';
import { checkOutputPaths } from './output-paths.ts';
import { encodingOf, fileEncoding, formatOf, readItems, readRecords, repeatKey, type InputFormat, type InputRecord, type PushKind, type ReadOptions } from './input.ts';
import { RepeatScreen } from './repeats.ts';
import { DEFAULT_BUDGET, Eta, progressView, type PushState } from './progress.ts';
import type { PushOptions, SyncPushOptions } from './push-options.ts';
import { syncStateOption } from './sync-commands.ts';
import { syncPush } from './sync-push.ts';

export type { PushOptions } from './push-options.ts';

/** The service's limit per request. */
const BATCH_SIZE = 500;

/** Files above this size run long enough for V8's heap growth to matter more than its speed. */
const LARGE_FILE_BYTES = 64 * 1024 * 1024;

interface Batch {
  /** Index of the batch's first record and one past its last. */
  start: number;
  end: number;
  /** The line after the batch, for "resume from line N". */
  nextLine: number;
  records: InputRecord[];
  /** The batch's own outcome, added to the checkpoint's summary once every batch before it is. */
  counts: Counts;
  /** Its local and service rejections, written in line order once every batch before it is acknowledged. */
  rejections: Rejection[];
}

interface Counts {
  created: number;
  updated: number;
  errors: number;
}

const noCounts = (): Counts => ({ created: 0, updated: 0, errors: 0 });

function rejection(record: InputRecord, code: string, message: string): Rejection {
  return { line: record.line, external_id: record.external_id, store_id: record.store_id, code, message };
}

/**
 * Pass 1: reads the whole file (a malformed one throws UsageError before anything is sent), counts
 * its items and screens their keys for the duplicate rule of the passes after it.
 */
async function screenFile(file: string, kind: PushKind, format: InputFormat, reading: ReadOptions, lines: number) {
  // Each item starts on a line of its own in CSV and JSON Lines: the line count bounds the keys.
  const repeats = new RepeatScreen(format === 'json' ? undefined : lines + 1);
  let total = 0;
  for await (const record of readItems(file, kind, format, reading)) {
    total++;
    if (record.external_id !== '') repeats.screen(repeatKey(kind, record));
  }
  return { total, repeats };
}

/** Builds the client; a push hands it its rate limiter, whose wait its ETA reads. */
export type PushClient = (rateLimit?: RateLimiter) => IntegrationClient;

/** Runs a push; returns the exit code (0 all ok, 1 some items rejected, 130 interrupted). */
export async function push(client: PushClient | undefined, kind: PushKind, file: string, options: PushOptions): Promise<number> {
  // With a sync state (--state or INTEGRATION_SYNC_STATE), only what changed is sent: see sync-commands.ts.
  const sync = options as SyncPushOptions;
  if (syncStateOption(sync.state)) return syncPush(client, kind, file, options);
  // Never a silent plain push for a user who asked for deactivation or a resend rule.
  const needsState = [sync.full && '--full', sync.maxAge !== undefined && '--max-age', sync.deactivateMissing && '--deactivate-missing', sync.confirmDeactivate !== undefined && '--confirm-deactivate'].filter(Boolean);
  if (needsState.length > 0) throw new UsageError(`${needsState.join(', ')} ${needsState.length === 1 ? 'works' : 'work'} only with --state <sqlite file | postgres URL> (or INTEGRATION_SYNC_STATE): without a state every item is sent anyway and nothing is deactivated.`);
  const format = formatOf(file, options.format);
  const reading = { encoding: encodingOf(options.encoding), delimiter: options.delimiter };
  const command = kind === 'catalog' ? 'catalog push' : 'stock push';
  const errorsPath = options.errors ?? `${file}.errors.csv`;
  // The bar goes to stderr, the report to stdout: a bar only when both are a terminal.
  const mode = options.json ? 'json' : process.stdout.isTTY && process.stderr.isTTY ? 'tty' : 'plain';

  const interrupt = new Interrupt();
  try {
    return await pushFile(client, kind, file, options, { command, errorsPath, mode, format, reading }, interrupt);
  } finally {
    interrupt.dispose();
  }
}

/**
 * Ctrl-C during a push. While the file is still being read (nothing sent yet) it stops at once.
 * Once batches are sent: no new batch, the ones in flight finish, checkpoint, exit 130; a second
 * Ctrl-C exits at once.
 */
class Interrupt {
  sending = false;
  requested = false;
  /** Writes a line for the user: the progress view's, once it is on screen, so it never lands on the bar. */
  note = (text: string): void => {
    process.stderr.write(`${text}\n`);
  };
  /** The last line before exiting at once: after the bar's line is finished, which nothing redraws then. */
  last = (text: string): void => {
    process.stderr.write(`${text}\n`);
  };
  readonly #onSigint = () => {
    if (!this.sending) {
      process.stderr.write('Interrupted before anything was sent: run the same command again.\n');
      process.exit(130);
    }
    if (this.requested) {
      this.last('Exiting at once: the checkpoint holds every batch acknowledged so far; run the same command with --resume to continue.');
      process.exit(130);
    }
    this.requested = true;
    this.note('Stopping: no new batch is sent, waiting for the batches in flight (Ctrl-C again to exit at once).');
  };

  constructor() {
    process.on('SIGINT', this.#onSigint);
  }

  dispose(): void {
    process.off('SIGINT', this.#onSigint);
  }
}

async function pushFile(
  client: PushClient | undefined,
  kind: PushKind,
  file: string,
  options: PushOptions,
  { command, errorsPath, mode, format, reading }: { command: Checkpoint['command']; errorsPath: string; mode: 'json' | 'tty' | 'plain'; format: InputFormat; reading: ReadOptions & { encoding: string } },
  interrupt: Interrupt,
): Promise<number> {
  // A push streams the file through a few short-lived objects per item, and by default V8 keeps
  // doubling the young generation while a long run allocates, up to 3 × 16 MB more resident memory
  // for a 1 GB file than for a 10 MB one, with nothing retained. The factor is read at each resize,
  // so setting it now holds the young generation at its size so far; no other flag is changed.
  setFlagsFromString('--semi-space-growth-factor=1');
  const unreadable = () => new UsageError(`Cannot read ${file}: check the path and its permissions.`);
  const found = await stat(file).catch(() => undefined);
  if (found === undefined || found.isDirectory()) throw unreadable();
  // Before anything is removed, read or sent: an output that is the input, or cannot be written.
  await checkOutputPaths(file, errorsPath, options.dryRun ? undefined : checkpointPath(file));
  let input;
  let lines;
  try {
    // The encoding first: a file that cannot be read as text sends nothing.
    reading = { ...reading, encoding: await fileEncoding(file, format, options.encoding, (line) => process.stderr.write(`${line}\n`)) };
    ({ fingerprint: input, lines } = await fingerprint(file));
  } catch (error) {
    throw error instanceof UsageError ? error : unreadable();
  }
  // Over a run of minutes V8 still lets its heap drift up (a 1 GB JSON Lines dry run peaked at
  // 107 MB, the 10 MB one at 91 MB). Favouring size holds the 1 GB run at 93 MB for some 10% more
  // time, a price a run of seconds would pay for nothing.
  if (input.size > LARGE_FILE_BYTES) setFlagsFromString('--optimize-for-size');

  if (options.dryRun) {
    const { total, repeats } = await screenFile(file, kind, format, reading, lines);
    const errors = new ErrorsFile(errorsPath, false);
    let rejected = 0;
    for await (const record of readRecords(file, kind, format, repeats.rule(), reading)) {
      if (!record.error) continue;
      rejected++;
      errors.write(rejection(record, record.error.code, record.error.message));
    }
    await errors.close();
    const report = { dry_run: true, items: total, would_send: total - rejected, rejected, errors_file: rejected > 0 ? errorsPath : null };
    if (options.json) console.log(JSON.stringify(report));
    else console.log(`Dry run: ${total} items read, ${total - rejected} would be sent, ${rejected} rejected locally${rejected > 0 ? ` (see ${errorsPath})` : ''}. Nothing was sent.`);
    return rejected > 0 ? 1 : 0;
  }
  if (!client) throw new UsageError('No client.');
  // The client's limiter is made here, so that the ETA can ask it what wait it knows of (a 429's pause).
  const { rateLimit } = rateLimitFromEnv();
  const budget = rateLimit === false ? undefined : (rateLimit ?? DEFAULT_BUDGET);
  const limiter = budget && new TokenBucket(budget);
  const sdk = client(limiter);
  const checkpoint = options.resume ? await loadCheckpoint(file, command, input) : undefined;
  const { total, repeats } = await screenFile(file, kind, format, reading, lines);

  const state: PushState = { done: checkpoint?.records ?? 0, total, created: 0, updated: 0, errors: 0 };
  for (const key of ['created', 'updated', 'errors'] as const) state[key] = checkpoint?.summary[key] ?? 0;
  const errors = new ErrorsFile(errorsPath, checkpoint !== undefined);
  const view = progressView(mode, command, kind);
  const startedAt = Date.now();
  const resumedFrom = checkpoint?.records ?? 0;
  const eta = new Eta(state.total - resumedFrom, BATCH_SIZE, budget, startedAt, limiter);
  if (options.resume && !checkpoint && !options.json) console.log(`${command}: no checkpoint at ${checkpointPath(file)} (nothing was acknowledged, or the last run completed): starting from the beginning`);
  interrupt.sending = true;
  interrupt.note = (text) => view.note(text);
  interrupt.last = (text) => {
    view.stop();
    process.stderr.write(`${text}\n`);
  };

  const inFlight = new Map<number, Promise<void>>();
  const finished = new Map<number, Batch>();
  const checkpoints = new CheckpointWriter(file);
  let acked: Checkpoint = checkpoint ?? { version: 1, command, input, records: 0, nextLine: 1, summary: {} };
  let nextToAck = resumedFrom;
  let failure: unknown;

  const acknowledge = async (batch: Batch) => {
    finished.set(batch.start, batch);
    // Only a contiguous prefix of batches is recorded, so a resumed run never skips an unsent one.
    let advanced = false;
    for (let next = finished.get(nextToAck); next; next = finished.get(nextToAck)) {
      finished.delete(nextToAck);
      nextToAck = next.end;
      // The summary counts acknowledged batches only: a resumed run sends the others again.
      const summary = Object.fromEntries((['created', 'updated', 'errors'] as const).map((k) => [k, (acked.summary[k] ?? 0) + next.counts[k]]));
      acked = { ...acked, records: next.end, nextLine: next.nextLine, summary };
      // The errors file follows the input's order and holds what the checkpoint covers, no more: a
      // batch after an unacknowledged one is sent again on --resume and would be written twice.
      for (const row of next.rejections.sort((a, b) => a.line - b.line)) errors.write(row);
      next.rejections = [];
      advanced = true;
    }
    if (advanced) await checkpoints.save(acked);
  };

  const send = async (batch: Batch) => {
    const items = batch.records.filter((r) => r.item !== undefined);
    for (const record of batch.records) if (record.error) batch.rejections.push(rejection(record, record.error.code, record.error.message));
    const counts = batch.counts;
    counts.errors += batch.records.length - items.length;
    if (items.length > 0) {
      const payload = items.map((r) => r.item) as never[];
      const result = kind === 'catalog' ? await sdk.catalog.upsertProducts(payload, { batchSize: BATCH_SIZE }) : await sdk.stock.set(payload, { batchSize: BATCH_SIZE });
      for (const outcome of result.results) {
        const record = items[outcome.index];
        if (outcome.status === 'created') counts.created++;
        else if (outcome.status === 'updated') counts.updated++;
        else {
          counts.errors++;
          if (record) batch.rejections.push(rejection(record, outcome.error?.code ?? 'UNKNOWN', outcome.error?.message ?? `status ${outcome.status}`));
        }
      }
    }
    for (const key of ['created', 'updated', 'errors'] as const) state[key] += counts[key];
    state.done += batch.records.length;
    eta.record(state.done - resumedFrom, Date.now()); // before the await: samples stay in order
    await acknowledge(batch);
    view.update(state, eta);
  };

  const dispatch = async (batch: Batch) => {
    while (inFlight.size >= options.concurrency) await Promise.race(inFlight.values());
    if (interrupt.requested || failure !== undefined) return; // Ctrl-C or a failure while waiting for a free slot: not sent
    const running = send(batch).catch((error: unknown) => {
      failure ??= error;
    }).finally(() => inFlight.delete(batch.start));
    inFlight.set(batch.start, running);
  };

  view.start(state, eta, acked.nextLine);
  let index = 0;
  let batch: Batch = { start: resumedFrom, end: resumedFrom, nextLine: acked.nextLine, records: [], counts: noCounts(), rejections: [] };
  try {
    for await (const record of readRecords(file, kind, format, repeats.rule(), reading)) {
      index++;
      if (index <= resumedFrom) continue; // acknowledged before the interruption; read again for the duplicate rule
      if (interrupt.requested || failure !== undefined) break;
      batch.records.push(record);
      batch.end = index;
      batch.nextLine = record.line + 1;
      if (batch.records.length === BATCH_SIZE) {
        await dispatch(batch);
        batch = { start: index, end: index, nextLine: record.line + 1, records: [], counts: noCounts(), rejections: [] };
      }
    }
    if (!interrupt.requested && failure === undefined && batch.records.length > 0) await dispatch(batch);
    await Promise.all(inFlight.values());
  } finally {
    view.stop();
    await errors.close();
  }

  const summary = kind === 'catalog' ? { created: state.created, updated: state.updated, errors: state.errors } : { updated: state.updated, errors: state.errors };
  const complete = !interrupt.requested && failure === undefined;
  if (complete) await checkpoints.remove();
  else if (acked.records > 0) await checkpoints.save(acked);
  const resumeHint = acked.records > 0
    ? `every batch up to line ${acked.nextLine - 1} was acknowledged and checkpointed in ${checkpointPath(file)}; run the same command with --resume to continue`
    : 'no batch was acknowledged; run the same command again to start over';
  if (options.json) console.log(JSON.stringify({ event: 'done', command, complete, items: state.total, done: state.done, ...summary, errors_file: errors.count > 0 ? errorsPath : null }));
  else console.log(`${command}: ${state.done}/${state.total} items, ${Object.entries(summary).map(([k, v]) => `${k} ${v}`).join(', ')}${errors.count > 0 || state.errors > 0 ? `; rejected items in ${errorsPath}` : ''}`);

  if (failure !== undefined) {
    const { message } = describeFailure(failure);
    console.error(`${command} stopped: ${redact(message).replace(/\.$/, '')} (${resumeHint}).`);
    return 2;
  }
  if (interrupt.requested) {
    console.error(`Interrupted: ${resumeHint}.`);
    return 130;
  }
  return state.errors > 0 ? 1 : 0;
}
