// Turns a stopped run into the BulkOperationError the caller sees: what failed, how many items
// were written, and what `partial` holds.
import { BulkOperationError } from '../../errors/index.ts';
import type { MergedResult } from './merge.ts';
import type { BulkRoute, ItemResultShape } from './route.ts';
import type { RunFailure } from './run.ts';

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
