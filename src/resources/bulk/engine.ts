// The bulk engine of `catalog` and `stock`: windows handed back in input order; on a failure nothing
// new starts, what is in flight settles, and a BulkOperationError holds the partial result.
import { raceAbort } from '../../clock.ts';
import { currentCall, traceBatch, type ResultCounts } from '../../diagnostics.ts';
import { BulkOperationError, ResponseValidationError, type ResponseIssue } from '../../errors/index.ts';
import type { CallOptions, Requester } from '../../transport/types.ts';
import { resolveBulkOptions, type BatchAnswer, type BulkInput, type BulkOptions, type BulkRoute, type BulkSettings, type ItemResultShape, type ProgressOf } from './types.ts';
import { checkInput, openWindows, WindowBuilder, type Window, type WindowSource } from './windowing.ts';

/** Runs the whole input to one merged result. Options and input are checked before anything is read. */
export async function collectBulk<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  requester: Requester,
  items: BulkInput<unknown>,
  options: BulkOptions<ProgressOf<Summary>> | undefined,
): Promise<MergedResult<Result, Summary>> {
  const settings = resolveBulkOptions(options);
  checkInput(items);
  const merged: MergedResult<Result, Summary> = { sync_ids: [], summary: route.emptySummary(), results: [] };
  try {
    for await (const settled of settledWindows(route, requester, items, settings)) mergeWindows(route, [settled], merged);
    return merged;
  } catch (error) {
    if (!(error instanceof RunFailure)) throw error;
    throw bulkOperationError(route, error, mergeWindows(route, error.later as SettledWindow<Result>[], merged), 'all');
  }
}

/** Streams the input one window at a time, keeping nothing of earlier windows but the repeat keys. */
export function streamBulk<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  requester: Requester,
  items: BulkInput<unknown>,
  options: BulkOptions<ProgressOf<Summary>> | undefined,
): AsyncGenerator<WindowResult<Result, Summary>, void, undefined> {
  const settings = resolveBulkOptions(options);
  checkInput(items);
  return (async function* stream() {
    try {
      for await (const settled of settledWindows(route, requester, items, settings)) {
        yield { sync_id: settled.sync_id, summary: addCounts(route.emptySummary(), settled.counts), results: settled.results };
      }
    } catch (error) {
      if (!(error instanceof RunFailure)) throw error;
      throw bulkOperationError(route, error, mergeWindows(route, error.later as SettledWindow<Result>[]), 'not-yielded');
    }
  })();
}

async function* settledWindows<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  requester: Requester,
  items: BulkInput<unknown>,
  settings: BulkSettings<ProgressOf<Summary>>,
): AsyncGenerator<SettledWindow<Result>, void, undefined> {
  const { signal } = settings.call;
  const source = openWindows(items, new WindowBuilder(route.rules, settings.batchSize), signal);
  const reportProgress = progressReporter(route, source, settings.onProgress);
  // The traced call learns its batch count once known: at once for an array, at the end for a stream.
  const call = currentCall();
  if (call && source.batchesTotal !== undefined) call.batches = source.batchesTotal;
  let batchesStarted = 0;
  const windows = runWindows({
    source,
    send: (window) => {
      const index = batchesStarted++;
      return traceBatch(index, window.batch.length, () => sendWindow(route, requester, window, settings.call), (settled) => batchCounts(route, settled));
    },
    settleUnsent: (window) => settle(route, window, undefined),
    concurrency: settings.concurrency,
    signal,
  });
  for await (const settled of windows) {
    reportProgress(settled);
    yield settled;
  }
  if (call) call.batches = batchesStarted;
}

/** The summary counts of the items a batch sent (not of those rejected before sending): no ids. */
function batchCounts<Result extends ItemResultShape, Summary extends object>(route: BulkRoute<Result, Summary>, settled: SettledWindow<Result>): ResultCounts {
  const rejected = new Set(settled.window.rejected.map((result) => result.index));
  return summarize(route, settled.results.filter((result) => !rejected.has(result.index))) as ResultCounts;
}

/** One request for a window's batch; `retry: 'safe'`: both routes write absolute values. */
async function sendWindow<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  requester: Requester,
  window: Window<Result>,
  call: CallOptions,
): Promise<SettledWindow<Result>> {
  const answer = await requester.send({
    method: route.method,
    path: route.path,
    body: { items: window.batch },
    schema: route.schema,
    retry: 'safe',
    options: call,
    // Item error messages may quote what was sent, and reach results, logs and the CLI's errors file.
    scrubAnswer: true,
  });
  return settle(route, window, answer);
}

/** A window with its batch's answer; no answer when its items were all rejected locally (`sync_id: null`). */
function settle<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
  answer: BatchAnswer<Result> | undefined,
): SettledWindow<Result> {
  const results = windowResults(route, window, answer);
  return { window, sync_id: answer?.sync_id ?? null, results, counts: summarize(route, results) as Record<string, number> };
}

/** A window whose batch the service answered (or that had none to send). */
interface SettledWindow<Result> {
  window: Window<Result>;
  /** `null` when the window had nothing to send. */
  sync_id: string | null;
  /** Every item of the window, in input order, with global indexes. */
  results: Result[];
  /** `results` counted by the route's counters, once: progress, merging and yielding add these up. */
  counts: Readonly<Record<string, number>>;
}

/** Why a run stopped early; the entry points turn it into a `BulkOperationError` with the partial result. */
class RunFailure<Result> {
  /** A batch failed after its retries, or reading the input failed. */
  declare readonly source: 'batch' | 'input';
  /** First global index without a result because of this failure. */
  declare readonly start: number;
  /** Last index of the failed batch's window; `undefined` when reading the input failed. */
  declare readonly end: number | undefined;
  declare readonly cause: unknown;
  /** Windows after the failed one that succeeded, in input order; none of them was handed out. */
  declare readonly later: SettledWindow<Result>[];
  /** Further windows that failed too (their items have no result either). */
  declare readonly alsoFailed: Window<Result>[];

  constructor(init: RunFailure<Result>) {
    Object.assign(this, init);
  }
}

type Outcome<Result> = { ok: true; value: SettledWindow<Result> } | { ok: false; error: unknown };

interface Slot<Result> {
  window: Window<Result>;
  outcome?: Outcome<Result>;
  settled: Promise<void>;
}

interface RunPlan<Result> {
  source: WindowSource<Result>;
  /** Sends a window's batch; resolves with its results, rejects with the batch's error. */
  send: (window: Window<Result>) => Promise<SettledWindow<Result>>;
  /** Windows with nothing to send are settled at once. */
  settleUnsent: (window: Window<Result>) => SettledWindow<Result>;
  concurrency: number;
  signal: AbortSignal | undefined;
}

/**
 * Yields settled windows in input order; throws {@link RunFailure} on a failed batch or input, and
 * the signal's reason on abort. At most `concurrency` batches are in flight and as many more windows
 * wait, so a stream is read only that far ahead of what has been handed back.
 */
async function* runWindows<Result extends ItemResultShape>(plan: RunPlan<Result>): AsyncGenerator<SettledWindow<Result>, void, undefined> {
  const { source, concurrency, signal } = plan;
  const slots: Slot<Result>[] = [];
  let inFlight = 0;
  let stopped = false;
  let inputEnded = false;
  let inputError: { error: unknown } | undefined;
  let wake: () => void = () => {};

  const start = (window: Window<Result>): void => {
    if (window.batch.length === 0) {
      slots.push({ window, outcome: { ok: true, value: plan.settleUnsent(window) }, settled: Promise.resolve() });
      return;
    }
    const slot: Slot<Result> = { window, settled: Promise.resolve() };
    inFlight += 1;
    slot.settled = plan.send(window).then(
      (value) => {
        slot.outcome = { ok: true, value };
      },
      (error: unknown) => {
        slot.outcome = { ok: false, error };
        stopped = true; // start no new batch once one has failed
      },
    ).finally(() => {
      inFlight -= 1;
      wake();
    });
    slots.push(slot);
  };

  try {
    for (;;) {
      signal?.throwIfAborted();
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      while (!stopped && !inputEnded && inFlight < concurrency && slots.length < 2 * concurrency) {
        let window: Window<Result> | undefined;
        try {
          window = await source.next();
        } catch (error) {
          signal?.throwIfAborted();
          inputError = { error };
          stopped = true;
          break;
        }
        if (window) start(window);
        else inputEnded = true;
      }
      const head = slots[0];
      if (!head) {
        if (inputError) {
          throw new RunFailure<Result>({ source: 'input', start: source.windowedUpTo, end: undefined, cause: inputError.error, later: [], alsoFailed: [] });
        }
        return;
      }
      if (!head.outcome) {
        await raceAbort(woken, signal);
        continue;
      }
      if (head.outcome.ok) {
        slots.shift();
        yield head.outcome.value;
        continue;
      }
      await raceAbort(Promise.all(slots.map((slot) => slot.settled)), signal);
      throw failureOf(head, slots.slice(1));
    }
  } finally {
    source.close();
  }
}

function failureOf<Result>(failed: Slot<Result>, rest: Slot<Result>[]): RunFailure<Result> {
  const later: SettledWindow<Result>[] = [];
  const alsoFailed: Window<Result>[] = [];
  for (const slot of rest) {
    if (slot.outcome?.ok) later.push(slot.outcome.value);
    else alsoFailed.push(slot.window);
  }
  const { window } = failed;
  return new RunFailure<Result>({
    source: 'batch',
    start: window.start,
    end: window.start + window.size - 1,
    cause: failed.outcome && !failed.outcome.ok ? failed.outcome.error : undefined,
    later,
    alsoFailed,
  });
}

const MAX_ISSUES = 20;

/**
 * The answered results in batch order, their `index` rewritten to the global one once the whole
 * answer has passed its checks: an answer that does not account for exactly the items sent is a
 * ResponseValidationError, as a result must never be attributed to the wrong item.
 */
function placeAnswers<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
  answer: BatchAnswer<Result>,
): Result[] {
  const { batch, batchIndexes } = window;
  const placed = inBatchOrder(route, batch, answer.results) ? answer.results : placeOutOfOrder(route, window, answer.results);
  for (let local = 0; local < batch.length; local += 1) placed[local]!.index = batchIndexes[local]!;
  return placed;
}

/** The usual answer: one result per item sent, in the order sent, each about its item. */
function inBatchOrder<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  batch: readonly unknown[],
  results: readonly Result[],
): boolean {
  const sent = batch.length;
  if (results.length !== sent) return false;
  for (let local = 0; local < sent; local += 1) {
    const result = results[local]!;
    if (result.index !== local || !route.rules.answers(result, batch[local])) return false;
  }
  return true;
}

/** Any other answer: placed by its indexes, or a ResponseValidationError saying what is wrong. */
function placeOutOfOrder<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
  results: readonly Result[],
): Result[] {
  const sent = window.batch.length;
  const placed: (Result | undefined)[] = new Array(sent).fill(undefined);
  const issues: ResponseIssue[] = [];
  if (results.length !== sent) {
    issues.push({ path: 'results', message: `has ${results.length} entries for the ${sent} items sent` });
  }
  results.forEach((result, position) => {
    const local = result.index;
    const path = `results[${position}]`;
    if (!Number.isInteger(local) || local < 0 || local >= sent) {
      issues.push({ path: `${path}.index`, message: `is not the index of an item sent (0 to ${sent - 1})` });
    } else if (placed[local] !== undefined) {
      issues.push({ path: `${path}.index`, message: `repeats index ${local}` });
    } else if (!route.rules.answers(result, window.batch[local])) {
      issues.push({ path, message: `is not about the item sent at index ${local} (its keys differ)` });
    } else {
      placed[local] = result;
    }
  });
  if (issues.length > 0) {
    throw new ResponseValidationError({
      issues: issues.slice(0, MAX_ISSUES),
      status: 200,
      requestMethod: route.method,
      requestPath: route.path,
    });
  }
  return placed as Result[];
}

/** Every result of a window in input order: the answered ones and the local rejections. */
function windowResults<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
  answer: BatchAnswer<Result> | undefined,
): Result[] {
  const answered = answer ? placeAnswers(route, window, answer) : [];
  const { rejected } = window;
  if (rejected.length === 0) return answered;
  if (answered.length === 0) return rejected;
  const merged: Result[] = [];
  let a = 0;
  let r = 0;
  while (a < answered.length || r < rejected.length) {
    merged.push(r >= rejected.length || (a < answered.length && answered[a]!.index < rejected[r]!.index) ? answered[a++]! : rejected[r++]!);
  }
  return merged;
}

/** Counts results by `status`: not the service's summary, so that local rejections count too. */
function summarize<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  results: readonly Result[],
): Summary {
  const summary = route.emptySummary();
  const counts = summary as Record<keyof Summary, number>;
  for (const result of results) {
    // Own keys only: a status such as `constructor` must not pick an Object.prototype member.
    const counter = Object.hasOwn(route.counters, result.status) ? route.counters[result.status] : undefined;
    if (counter !== undefined) counts[counter] += 1;
  }
  return summary;
}

/** Adds a window's {@link SettledWindow.counts} into a summary. */
function addCounts<Summary extends object>(summary: Summary, counts: Readonly<Record<string, number>>): Summary {
  const into = summary as Record<string, number>;
  for (const key of Object.keys(counts)) into[key] = (into[key] ?? 0) + counts[key]!;
  return summary;
}

/** The merged result of several windows: the shape of `BulkUpsertResult` and `StockResult`. */
interface MergedResult<Result, Summary> {
  sync_ids: string[];
  summary: Summary;
  results: Result[];
}

/** The shape of one yielded window: `BatchResult` and `StockBatchResult`. */
interface WindowResult<Result, Summary> {
  sync_id: string | null;
  summary: Summary;
  results: Result[];
}

/** Windows merged in the order given (input order): one `sync_id` per batch sent. */
function mergeWindows<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  windows: Iterable<SettledWindow<Result>>,
  into: MergedResult<Result, Summary> = { sync_ids: [], summary: route.emptySummary(), results: [] },
): MergedResult<Result, Summary> {
  for (const settled of windows) {
    if (settled.sync_id !== null) into.sync_ids.push(settled.sync_id);
    addCounts(into.summary, settled.counts);
    for (const result of settled.results) into.results.push(result);
  }
  return into;
}

/** Reports after each settled window, in input order; a window with nothing sent is not a batch. */
function progressReporter<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  { itemsTotal, batchesTotal }: { itemsTotal: number | undefined; batchesTotal: number | undefined },
  onProgress: ((progress: ProgressOf<Summary>) => void) | undefined,
): (settled: SettledWindow<Result>) => void {
  const summary = route.emptySummary();
  let itemsDone = 0;
  let batchesDone = 0;
  return (settled) => {
    itemsDone += settled.results.length;
    if (settled.sync_id !== null) batchesDone += 1;
    addCounts(summary, settled.counts);
    onProgress?.({ ...summary, itemsDone, itemsTotal, batchesDone, batchesTotal });
  };
}

/** `all`: partial holds every window that succeeded; `not-yielded`: only those not yet yielded. */
type PartialScope = 'all' | 'not-yielded';

function describeCause(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}

function range(start: number, end: number): string {
  return start === end ? `item ${start}` : `items ${start}–${end}`;
}

function bulkOperationError<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  failure: RunFailure<Result>,
  partial: MergedResult<Result, Summary>,
  scope: PartialScope,
): BulkOperationError<MergedResult<Result, Summary>> {
  const written = partial.results.filter((result) => result.status !== 'error').length;
  const what =
    failure.source === 'batch'
      ? `the batch of ${range(failure.start, failure.end ?? failure.start)} failed after its retries`
      : `reading the input failed; nothing from item ${failure.start} on was sent`;
  const which = scope === 'all' ? 'the batches that succeeded' : 'the batches that succeeded after it and were not yielded yet (those yielded before are yours already)';
  const others = failure.alsoFailed.map((window) => range(window.start, window.start + window.size - 1));
  const message = [
    `${route.method} ${route.path}: ${what} (${describeCause(failure.cause)}).`,
    `${written} items were written by ${which}; error.partial holds the results of their ${partial.results.length} items.`,
    others.length > 0 ? `The batches of ${others.join(', ')} failed too.` : '',
    failure.source === 'batch'
      ? 'A failed batch may have been applied before its error: its values are absolute, so sending it again is safe.'
      : '',
  ];
  return new BulkOperationError(message.filter(Boolean).join(' '), { partial, cause: failure.cause });
}
