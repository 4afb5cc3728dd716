// What a bulk call hands back: each window's results (answers checked against what was sent), the
// summaries counted from them, progress, and the BulkOperationError of a stopped run.
import { BulkOperationError, ResponseValidationError, type ResponseIssue } from '../../errors/index.ts';
import type { BatchAnswer, BulkRoute, ItemResultShape } from './route.ts';
import type { RunFailure, SettledWindow } from './run.ts';
import type { WindowSource, Window } from './windowing.ts';

// Places the service's answer to one batch back into the input: each result's batch-local `index`
// becomes the global index. An answer that does not account for exactly the items sent is a
// ResponseValidationError: a result must never be attributed to the wrong item.

const MAX_ISSUES = 20;

/**
 * The answered results in batch order, each carrying its global index. The service's own result
 * objects are used, not copied: only their `index` is rewritten, and only once the whole answer has
 * passed its checks (an answer that fails them is left as it came).
 */
function placeAnswers<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
  answer: BatchAnswer<Result>,
): Result[] {
  const { results } = answer;
  const { batch, batchIndexes } = window;
  const sent = batch.length;
  const placed = inBatchOrder(route, batch, results) ? results : placeOutOfOrder(route, window, results);
  for (let local = 0; local < sent; local += 1) placed[local]!.index = batchIndexes[local]!;
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
  const { rules } = route;
  for (let local = 0; local < sent; local += 1) {
    const result = results[local]!;
    if (result.index !== local || !rules.answers(result, batch[local])) return false;
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
export function windowResults<Result extends ItemResultShape, Summary extends object>(
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
    const next = r >= rejected.length || (a < answered.length && answered[a]!.index < rejected[r]!.index) ? answered[a++]! : rejected[r++]!;
    merged.push(next);
  }
  return merged;
}

/**
 * Counts results into a summary by their `status`. The summary is recounted from the results
 * rather than taken from the service, so that it covers local rejections and always agrees with
 * `results`.
 */
export function addToSummary<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  summary: Summary,
  results: readonly Result[],
): Summary {
  const counts = summary as Record<keyof Summary, number>;
  for (const result of results) {
    // Own keys only: a status such as `constructor` must not pick an Object.prototype member.
    const counter = Object.hasOwn(route.counters, result.status) ? route.counters[result.status] : undefined;
    if (counter !== undefined) counts[counter] += 1;
  }
  return summary;
}

export function summarize<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  results: readonly Result[],
): Summary {
  return addToSummary(route, route.emptySummary(), results);
}

/** The merged result of several windows: the shape of `BulkUpsertResult` and `StockResult`. */
export interface MergedResult<Result, Summary> {
  sync_ids: string[];
  summary: Summary;
  results: Result[];
}

/** The shape of one yielded window: `BatchResult` and `StockBatchResult`. */
export interface WindowResult<Result, Summary> {
  sync_id: string | null;
  summary: Summary;
  results: Result[];
}

export function toWindowResult<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  settled: SettledWindow<Result>,
): WindowResult<Result, Summary> {
  return { sync_id: settled.sync_id, summary: addToSummary(route, route.emptySummary(), settled.results), results: settled.results };
}

/** Windows merged in the order given (input order): one `sync_id` per batch sent. */
export function mergeWindows<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  windows: Iterable<SettledWindow<Result>>,
  into: MergedResult<Result, Summary> = { sync_ids: [], summary: route.emptySummary(), results: [] },
): MergedResult<Result, Summary> {
  for (const settled of windows) {
    if (settled.sync_id !== null) into.sync_ids.push(settled.sync_id);
    addToSummary(route, into.summary, settled.results);
    for (const result of settled.results) into.results.push(result);
  }
  return into;
}

/** Counts so far, as `onProgress` receives them: the counters plus the route's summary. */
export type ProgressOf<Summary> = Summary & {
  itemsDone: number;
  itemsTotal: number | undefined;
  batchesDone: number;
  batchesTotal: number | undefined;
};

/** Accumulates settled windows and reports after each one, in input order. */
export class ProgressTracker<Result extends ItemResultShape, Summary extends object> {
  readonly #route: BulkRoute<Result, Summary>;
  readonly #onProgress: ((progress: ProgressOf<Summary>) => void) | undefined;
  readonly #itemsTotal: number | undefined;
  readonly #batchesTotal: number | undefined;
  readonly #summary: Summary;
  #itemsDone = 0;
  #batchesDone = 0;

  constructor(
    route: BulkRoute<Result, Summary>,
    totals: { itemsTotal: number | undefined; batchesTotal: number | undefined },
    onProgress: ((progress: ProgressOf<Summary>) => void) | undefined,
  ) {
    this.#route = route;
    this.#onProgress = onProgress;
    this.#itemsTotal = totals.itemsTotal;
    this.#batchesTotal = totals.batchesTotal;
    this.#summary = route.emptySummary();
  }

  /** A window with nothing sent still reports (its items now have results) but is not a batch. */
  record(settled: SettledWindow<Result>): void {
    this.#itemsDone += settled.results.length;
    if (settled.sync_id !== null) this.#batchesDone += 1;
    addToSummary(this.#route, this.#summary, settled.results);
    this.#onProgress?.({
      ...this.#summary,
      itemsDone: this.#itemsDone,
      itemsTotal: this.#itemsTotal,
      batchesDone: this.#batchesDone,
      batchesTotal: this.#batchesTotal,
    });
  }
}

// Turns a stopped run into the BulkOperationError the caller sees: what failed, how many items
// were written, and what `partial` holds.

/** `all`: partial holds every window that succeeded; `not-yielded`: only those not yet yielded. */
export type PartialScope = 'all' | 'not-yielded';

function describeCause(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}

function range(start: number, end: number): string {
  return start === end ? `item ${start}` : `items ${start}–${end}`;
}

export function bulkOperationError<Result extends ItemResultShape, Summary extends object>(
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
