// One sync run: scope from health(), the lease, the input classified window by window, changed
// items sent through the client's bulk write one batch per call, and the state moved only for
// items the service acknowledged, after their batch was answered.
import { randomUUID } from 'node:crypto';
import type { IntegrationClient } from '../client.ts';
import type { Clock } from '../clock.ts';
import { currentCall, traceCall, type ResultCounts } from '../diagnostics.ts';
import { ApiError, AuthenticationError, BulkOperationError, ConfigurationError, FeatureDisabledError, InsufficientScopeError } from '../errors/index.ts';
import type { BulkInput, ItemResultShape } from '../resources/bulk/types.ts';
import { checkInput } from '../resources/bulk/windowing.ts';
import type { Health } from '../schemas/health.ts';
import { Classifier, type ChangedItem } from './classify.ts';
import { FirstOccurrences } from '../resources/bulk/windowing.ts';
import { SyncLeaseLostError, SyncRunInProgressError } from './errors.ts';
import type { SyncKindAdapter } from './kinds.ts';
import { scopeOf } from './scope.ts';
import type { AcknowledgedItem, RunErrorItem, SeenMark, SyncState } from './state.ts';
import type { SyncProgress, SyncRunOptions } from './types.ts';

export const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;
/** Failed items kept per run in the state for `runErrors` (all of them stay in the result). */
export const MAX_STORED_ERRORS = 10_000;

export interface RunContext {
  client: IntegrationClient;
  state: SyncState;
  clock: Clock;
  maxAgeMs: number;
}

export interface RunOutcome<Result> {
  runId: string;
  total: number;
  unchanged: number;
  sent: number;
  created: number;
  updated: number;
  errors: number;
  orphans: number | null;
  durationMs: number;
  results: Result[];
}

interface Settled<Result> {
  batch: ChangedItem[];
  results?: Result[];
  error?: unknown;
}

/** The errors after which a run cannot go on: the key is refused or the environment is disabled. */
function isFatal(error: unknown): boolean {
  return error instanceof AuthenticationError || error instanceof InsufficientScopeError || error instanceof FeatureDisabledError;
}

/** The code a failed batch gives its items. */
function codeOf(error: unknown): string {
  if (error instanceof ApiError) return error.code;
  const name = (error as { name?: unknown })?.name;
  return typeof name === 'string' ? name : 'BATCH_FAILED';
}

function checkRunOptions(options: SyncRunOptions): void {
  for (const flag of ['full', 'dryRun'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') throw new ConfigurationError(`${flag} must be a boolean.`);
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw new ConfigurationError('onProgress must be a function.');
  const { concurrency } = options;
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) throw new ConfigurationError('concurrency must be an integer >= 1.');
  const { batchSize } = options;
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 500)) throw new ConfigurationError('batchSize must be an integer from 1 to 500.');
}

/** Runs one sync of `adapter.kind`; traced as `sync.catalog` / `sync.stock` with its counts. */
export function runSync<Result extends ItemResultShape>(
  context: RunContext,
  adapter: SyncKindAdapter<Result>,
  items: BulkInput<unknown>,
  options: SyncRunOptions = {},
): Promise<RunOutcome<Result>> {
  checkRunOptions(options);
  checkInput(items);
  return traceCall(`sync.${adapter.kind}`, () => execute(context, adapter, items, options), (outcome) => countsOf(outcome, adapter.kind === 'catalog'));
}

function countsOf(outcome: RunOutcome<unknown>, withCreated: boolean): ResultCounts {
  const counts: ResultCounts = { total: outcome.total, unchanged: outcome.unchanged, sent: outcome.sent, updated: outcome.updated, errors: outcome.errors };
  if (withCreated) counts.created = outcome.created;
  if (outcome.orphans !== null) counts.orphans = outcome.orphans;
  return counts;
}

async function execute<Result extends ItemResultShape>(
  context: RunContext,
  adapter: SyncKindAdapter<Result>,
  items: BulkInput<unknown>,
  options: SyncRunOptions,
): Promise<RunOutcome<Result>> {
  const { client, state, clock } = context;
  const { kind } = adapter;
  const dryRun = options.dryRun === true;
  const full = options.full === true;
  const startedAt = clock.now();
  const runId = randomUUID();
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const health: Health = await client.health({ signal, timeoutMs: options.timeoutMs, totalTimeoutMs: options.totalTimeoutMs, maxRetries: options.maxRetries });
  const baseUrl = baseUrlOf(client);
  const scope = scopeOf(baseUrl, health);

  let seq = 0;
  let stopRenewing = () => {};
  if (!dryRun) {
    const holder = await state.acquireLease({ scope, kind, runId, startedAt, now: startedAt, leaseMs: LEASE_MS });
    if (holder) throw new SyncRunInProgressError(kind, holder.runId, holder.startedAt);
    try {
      seq = await state.startRun({ runId, scope, kind, baseUrl, merchantId: health.merchant_id, full, startedAt });
    } catch (error) {
      await state.releaseLease({ scope, kind, runId }).catch(() => {});
      throw error;
    }
    stopRenewing = keepLease(context, { scope, kind, runId }, stop);
  }

  const results: Result[] = [];
  const counts = { sent: 0, created: 0, updated: 0, serviceErrors: 0 };
  let storedErrors = 0;
  const rejectionsToStore: RunErrorItem[] = [];
  let classifier: Classifier<Result>;
  try {
    classifier = newClassifier();
  } catch (error) {
    // The input could not even be opened: the run ends at once, recorded as failed.
    stopRenewing();
    if (!dryRun) {
      await state.finishRun(runId, { ...finishedCounts({ total: 0, unchanged: 0, sent: 0, created: 0, updated: 0, errors: 0 }, kind === 'catalog'), finishedAt: clock.now(), outcome: 'failed', complete: false, orphans: null, error: describe(error) }).catch(() => {});
      await state.releaseLease({ scope, kind, runId }).catch(() => {});
    }
    throw error;
  }
  function newClassifier(): Classifier<Result> {
    return new Classifier(items, {
      kind,
      rules: adapter.rules,
      storeIdsOf: adapter.storeIdsOf,
      state,
      scope,
      resend: { full, maxAgeMs: context.maxAgeMs, now: startedAt },
      repeats: dryRun ? { kind: 'memory', seen: new FirstOccurrences() } : { kind: 'state', seq },
      signal,
      onRejected: (result) => {
        results.push(result);
        if (!dryRun && storedErrors < MAX_STORED_ERRORS) {
          storedErrors += 1;
          rejectionsToStore.push(errorItem(result));
        }
      },
      onWindow: async () => {
        report();
        await recordAnswered();
      },
      quiet: () => recording,
    });
  }
  /** Local rejections go to the state's error list as they are found. */
  const storeRejections = async () => {
    if (rejectionsToStore.length === 0) return;
    const errors = rejectionsToStore.splice(0);
    await state.recordBatch({ scope, kind, runId, sentAt: clock.now(), seen: { seq, marks: [] }, acknowledged: [], errors });
  };
  const itemsTotal = Array.isArray(items) ? items.length : undefined;
  const progress = (): SyncProgress => {
    const errors = classifier.rejected + counts.serviceErrors;
    return {
      // A dry run's changed items are done once counted: nothing more happens to them.
      itemsDone: classifier.unchanged + classifier.rejected + counts.created + counts.updated + counts.serviceErrors + (dryRun ? counts.sent : 0),
      itemsTotal,
      unchanged: classifier.unchanged,
      sent: counts.sent,
      ...(kind === 'catalog' ? { created: counts.created } : {}),
      updated: counts.updated,
      errors,
    };
  };
  const report = () => options.onProgress?.(progress());

  const sendOptions = {
    batchSize: options.batchSize ?? 500,
    signal,
    timeoutMs: options.timeoutMs,
    totalTimeoutMs: options.totalTimeoutMs,
    maxRetries: options.maxRetries,
  };
  const send = async (batch: ChangedItem[]): Promise<Settled<Result>> => {
    try {
      return { batch, results: await adapter.send(client, batch.map((changed) => changed.item), sendOptions) };
    } catch (error) {
      return { batch, error };
    }
  };

  /** Records a batch's answer: acknowledged items move the state, the others become errors. */
  const record = async (settled: Settled<Result>): Promise<void> => {
    const failure = settled.error instanceof BulkOperationError ? settled.error.cause : settled.error;
    if (settled.error !== undefined && (!(settled.error instanceof BulkOperationError) || isFatal(failure))) throw failure;
    const acknowledged: AcknowledgedItem[] = [];
    const seen: SeenMark[] = [];
    const failed: Result[] = [];
    settled.batch.forEach((changed, position) => {
      const answered = settled.results?.[position];
      if (answered && (answered.status === 'created' || answered.status === 'updated')) {
        if (answered.status === 'created') counts.created += 1;
        else counts.updated += 1;
        acknowledged.push({ key: changed.key, index: changed.index, externalId: changed.externalId, storeId: changed.storeId, fingerprint: changed.fingerprint, storeIds: changed.storeIds });
        return;
      }
      seen.push({ key: changed.key, externalId: changed.externalId, storeId: changed.storeId, index: changed.index });
      const result = answered
        ? { ...answered, index: changed.index, status: 'error' as const, error: answered.error ?? { code: 'UNKNOWN_STATUS', message: `the service answered status ${answered.status}` } }
        : { ...adapter.rules.rejected(changed.index, changed.item, ''), error: { code: codeOf(failure), message: (failure as Error)?.message ?? String(failure) } };
      failed.push(result as Result);
    });
    counts.serviceErrors += failed.length;
    mergeInOrder(results, failed);
    const toStore = failed.slice(0, Math.max(0, MAX_STORED_ERRORS - storedErrors));
    storedErrors += toStore.length;
    if (!dryRun) {
      await state.recordBatch({ scope, kind, runId, sentAt: clock.now(), seen: { seq, marks: seen }, acknowledged, errors: toStore.map(errorItem) });
      classifier.written(settled.batch);
    }
    report();
  };

  // Each answer is recorded as soon as it arrives (one at a time, and never while the classifier
  // judges a window), not when the next batch is ready: with few changes in a long input that could
  // be minutes later, and a crash or Ctrl-C meanwhile would resend what the service acknowledged.
  const toRecord: Settled<Result>[] = [];
  let recording: Promise<void> = Promise.resolve();
  let recordFailure: { error: unknown } | undefined;
  function recordAnswered(): Promise<void> {
    recording = recording.then(async () => {
      while (toRecord.length > 0 && !classifier.judging) {
        try {
          await record(toRecord.shift()!);
        } catch (error) {
          recordFailure ??= { error };
        }
      }
    });
    return recording;
  }
  const throwIfRecordFailed = () => {
    if (recordFailure) throw recordFailure.error;
  };

  let complete = false;
  let batches = 0;
  const inFlight: Promise<void>[] = [];
  const dispatch = (batch: ChangedItem[]) =>
    inFlight.push(
      send(batch).then((settled) => {
        toRecord.push(settled);
        void recordAnswered();
      }),
    );
  try {
    const concurrency = options.concurrency ?? 1;
    for (;;) {
      throwIfRecordFailed();
      const batch = await classifier.take(sendOptions.batchSize);
      await storeRejections();
      if (batch.length === 0) break;
      counts.sent += batch.length;
      if (dryRun) continue;
      batches += 1;
      if (inFlight.length >= concurrency) await inFlight.shift();
      throwIfRecordFailed();
      dispatch(batch);
    }
    while (inFlight.length > 0) await inFlight.shift();
    await recordAnswered();
    throwIfRecordFailed();
    complete = true;
    if (dryRun) report();
    const orphans = dryRun ? null : await state.countOrphans(scope, kind, seq);
    const outcome: RunOutcome<Result> = {
      runId,
      total: classifier.read,
      unchanged: classifier.unchanged,
      sent: counts.sent,
      created: counts.created,
      updated: counts.updated,
      errors: classifier.rejected + counts.serviceErrors,
      orphans,
      durationMs: clock.now() - startedAt,
      results,
    };
    if (!dryRun) await state.finishRun(runId, { ...finishedCounts(outcome, kind === 'catalog'), finishedAt: clock.now(), outcome: 'completed', complete: true, orphans, error: null });
    const call = currentCall();
    if (call) call.batches = batches;
    return outcome;
  } catch (error) {
    classifier.close();
    classifier.judging = false;
    // The input or a batch's write failed, or the run was stopped: the batches already sent are
    // answered (an abort ends them at once), and what they acknowledged is kept.
    await Promise.allSettled(inFlight.splice(0));
    await recordAnswered().catch(() => {});
    const reason = stop.signal.aborted ? stop.signal.reason : error;
    if (!dryRun) {
      const aborted = options.signal?.aborted === true;
      const partial = { total: classifier.read, unchanged: classifier.unchanged, sent: counts.sent, created: counts.created, updated: counts.updated, errors: classifier.rejected + counts.serviceErrors };
      await state
        .finishRun(runId, { ...finishedCounts(partial, kind === 'catalog'), finishedAt: clock.now(), outcome: aborted ? 'aborted' : 'failed', complete, orphans: null, error: describe(reason) })
        .catch(() => {});
    }
    throw reason;
  } finally {
    stopRenewing();
    if (!dryRun) await state.releaseLease({ scope, kind, runId }).catch(() => {});
  }

}

function finishedCounts(counts: { total: number; unchanged: number; sent: number; created: number; updated: number; errors: number }, withCreated: boolean) {
  const { total, unchanged, sent, updated, errors } = counts;
  return withCreated ? { total, unchanged, sent, created: counts.created, updated, errors } : { total, unchanged, sent, updated, errors };
}

function errorItem(result: ItemResultShape & { external_id?: string; store_id?: string }): RunErrorItem {
  return {
    index: result.index,
    external_id: result.external_id ?? '',
    ...(result.store_id === undefined ? {} : { store_id: result.store_id }),
    code: result.error?.code ?? 'UNKNOWN',
    message: result.error?.message ?? '',
  };
}

/** Inserts `later` (in input order) into `results` (in input order). */
function mergeInOrder<Result extends ItemResultShape>(results: Result[], later: Result[]): void {
  for (const result of later) {
    let at = results.length;
    while (at > 0 && results[at - 1]!.index > result.index) at -= 1;
    results.splice(at, 0, result);
  }
}

function describe(error: unknown): string {
  const name = (error as { name?: unknown })?.name;
  const message = (error as { message?: unknown })?.message;
  return `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : String(error)}`;
}

/** The client's base URL without credentials (a userinfo part must not reach the state). */
function baseUrlOf(client: IntegrationClient): string {
  const raw = (client as { baseUrl?: unknown }).baseUrl;
  if (typeof raw !== 'string') return '';
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return raw;
  }
}

/** Renews the lease while the run is alive; a lost lease stops the run. */
function keepLease(context: RunContext, lease: { scope: string; kind: 'catalog' | 'stock'; runId: string }, stop: AbortController): () => void {
  let cancel = () => {};
  let stopped = false;
  const schedule = () => {
    cancel = context.clock.setTimeout(() => {
      context.state.renewLease({ ...lease, now: context.clock.now(), leaseMs: LEASE_MS }).then(
        (held) => {
          if (stopped) return;
          if (!held) stop.abort(new SyncLeaseLostError(`The ${lease.kind} sync run ${lease.runId} lost its lease to another run; it stopped, keeping what was acknowledged.`));
          else schedule();
        },
        () => {
          // The state is unreachable for now: try again at the next tick, the lease lasts 60 s.
          if (!stopped) schedule();
        },
      );
    }, RENEW_EVERY_MS);
  };
  schedule();
  return () => {
    stopped = true;
    cancel();
  };
}
