// The two ways to run a bulk write, shared by `catalog` and `stock`: collect everything into one
// result, or stream one window at a time.
import { currentCall, traceBatch, type ResultCounts } from '../../diagnostics.ts';
import type { CallOptions, Requester } from '../../transport/types.ts';
import { resolveBulkOptions, type BulkSettings } from './options.ts';
import { bulkOperationError, mergeWindows, ProgressTracker, summarize, toWindowResult, windowResults, type MergedResult, type ProgressOf, type WindowResult } from './results.ts';
import type { BulkRoute, ItemResultShape } from './route.ts';
import { RunFailure, runWindows, type SettledWindow } from './run.ts';
import type { BulkInput, BulkOptions } from './types.ts';
import { checkInput, openWindows, WindowBuilder, type Window } from './windowing.ts';

async function* settledWindows<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  requester: Requester,
  items: BulkInput<unknown>,
  settings: BulkSettings<ProgressOf<Summary>>,
): AsyncGenerator<SettledWindow<Result>, void, undefined> {
  const { signal } = settings.call;
  const source = openWindows(items, new WindowBuilder(route.rules, settings.batchSize), signal);
  const progress = new ProgressTracker(route, source, settings.onProgress);
  // The call traced around this run learns its batch count as soon as it is known: at once for an
  // array, at the end of the input for a stream.
  const call = currentCall();
  if (call && source.batchesTotal !== undefined) call.batches = source.batchesTotal;
  let batchesStarted = 0;
  const windows = runWindows({
    source,
    send: (window) => {
      const index = batchesStarted++;
      return traceBatch(index, window.batch.length, () => sendWindow(route, requester, window, settings.call), (settled) => batchCounts(route, settled));
    },
    settleUnsent: (window) => settleUnsent(route, window),
    concurrency: settings.concurrency,
    signal,
  });
  for await (const settled of windows) {
    progress.record(settled);
    yield settled;
  }
  if (call) call.batches = batchesStarted;
}

/** The summary counts of the items a batch sent (not of those rejected before sending): no ids. */
function batchCounts<Result extends ItemResultShape, Summary extends object>(route: BulkRoute<Result, Summary>, settled: SettledWindow<Result>): ResultCounts {
  const rejected = new Set(settled.window.rejected.map((result) => result.index));
  return summarize(route, settled.results.filter((result) => !rejected.has(result.index))) as ResultCounts;
}

/**
 * Runs the whole input and returns one merged result. Options and input are checked at once,
 * before anything is read or sent.
 */
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

/**
 * Streams the input one window at a time, keeping nothing of earlier windows but the repeat keys.
 * Options and input are checked when called, before the first window is asked for.
 */
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
      for await (const settled of settledWindows(route, requester, items, settings)) yield toWindowResult(route, settled);
    } catch (error) {
      if (!(error instanceof RunFailure)) throw error;
      throw bulkOperationError(route, error, mergeWindows(route, error.later as SettledWindow<Result>[]), 'not-yielded');
    }
  })();
}

/**
 * One request for a window's batch. `retry: 'safe'`: both routes write absolute values, so a
 * repeat cannot act twice. The caller's per-call options go to every batch's request.
 */
export async function sendWindow<Result extends ItemResultShape, Summary extends object>(
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
  });
  return { window, sync_id: answer.sync_id, results: windowResults(route, window, answer) };
}

/** A window whose items were all rejected locally: no request, `sync_id: null`. */
export function settleUnsent<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
): SettledWindow<Result> {
  return { window, sync_id: null, results: windowResults(route, window, undefined) };
}
