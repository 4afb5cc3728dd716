// Places the service's answer to one batch back into the input: each result's batch-local `index`
// becomes the global index. An answer that does not account for exactly the items sent is a
// ResponseValidationError: a result must never be attributed to the wrong item.
import { ResponseValidationError, type ResponseIssue } from '../../errors/index.ts';
import type { BatchAnswer, BulkRoute, ItemResultShape } from './route.ts';
import type { Window } from './window.ts';

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
