import type { BulkRoute, ItemResultShape } from './route.ts';

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
    const counter = route.counters[result.status];
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
