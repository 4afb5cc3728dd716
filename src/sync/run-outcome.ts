// A run's counts as it ends: its result, its span's counts, what the state records, and the failed
// items in input order.
import type { ResultCounts } from '../diagnostics.ts';
import type { ItemResultShape } from '../resources/bulk/types.ts';
import type { RunErrorItem, SyncCounts } from './state.ts';

export interface RunOutcome<Result> extends Required<SyncCounts> {
  runId: string;
  orphans: number | null;
  durationMs: number;
  results: Result[];
}

/** The counts of a run's span (`created` for the catalog only; `orphans` once known). */
export function spanCounts(outcome: RunOutcome<unknown>, withCreated: boolean): ResultCounts {
  const counts: ResultCounts = { total: outcome.total, unchanged: outcome.unchanged, sent: outcome.sent, updated: outcome.updated, errors: outcome.errors };
  if (withCreated) counts.created = outcome.created;
  if (outcome.orphans !== null) counts.orphans = outcome.orphans;
  return counts;
}

/** The counts the state records (stock runs have no `created`). */
export function storedCounts(counts: Required<SyncCounts>, withCreated: boolean): SyncCounts {
  const { total, unchanged, sent, updated, errors } = counts;
  return withCreated ? { total, unchanged, sent, created: counts.created, updated, errors } : { total, unchanged, sent, updated, errors };
}

/** A failed item as the state keeps it for `runErrors` (never the payload). */
export function errorItem(result: ItemResultShape & { external_id?: string; store_id?: string }): RunErrorItem {
  return {
    index: result.index,
    external_id: result.external_id ?? '',
    ...(result.store_id === undefined ? {} : { store_id: result.store_id }),
    code: result.error?.code ?? 'UNKNOWN',
    message: result.error?.message ?? '',
  };
}

/** Inserts `later` (in input order) into `results` (in input order). */
export function mergeInOrder<Result extends ItemResultShape>(results: Result[], later: readonly Result[]): void {
  for (const result of later) {
    let at = results.length;
    while (at > 0 && results[at - 1]!.index > result.index) at -= 1;
    results.splice(at, 0, result);
  }
}

/** An error's name and message, as the run's history keeps it. */
export function describe(error: unknown): string {
  const name = (error as { name?: unknown })?.name;
  const message = (error as { message?: unknown })?.message;
  return `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : String(error)}`;
}
