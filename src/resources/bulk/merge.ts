import type { BulkRoute, ItemResultShape } from './route.ts';
import type { SettledWindow } from './run.ts';
import { addToSummary } from './summary.ts';

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
