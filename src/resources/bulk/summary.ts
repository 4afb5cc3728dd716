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
