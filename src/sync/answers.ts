// What a batch's answer says about each of its items: acknowledged (the state moves), or not. An
// item the answer does not acknowledge keeps its in-flight mark and the next run sends it whatever
// its fingerprint: no answer, or one that does not say what happened, and an item error too (a
// STORE_WRITE_FAILED product had its fields and other stores written, INTERNAL says nothing, and an
// earlier run's lost answer may still be what the service holds).
import { ApiError, AuthenticationError, BulkOperationError, FeatureDisabledError, InsufficientScopeError } from '../errors/index.ts';
import type { ItemResultShape, ItemRules } from '../resources/bulk/types.ts';
import type { ChangedItem } from './classify.ts';
import type { AcknowledgedItem } from './state.ts';

/** A batch and what came back for it: the results of its items, or the error of the whole request. */
export interface Settled<Result> {
  batch: ChangedItem[];
  results?: Result[];
  error?: unknown;
}

/** A batch's answer, item by item. */
export interface ReadAnswer<Result> {
  acknowledged: AcknowledgedItem[];
  created: number;
  updated: number;
  /** A result per item not acknowledged (an item error, or no word of it), in batch order. */
  failed: Result[];
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

/**
 * Reads a settled batch. Throws the failure when the run cannot go on (the key is refused, the
 * environment is disabled, or something else than the bulk write failed).
 */
export function readAnswer<Result extends ItemResultShape>(settled: Settled<Result>, rules: ItemRules<Result>): ReadAnswer<Result> {
  const failure = settled.error instanceof BulkOperationError ? settled.error.cause : settled.error;
  if (settled.error !== undefined && (!(settled.error instanceof BulkOperationError) || isFatal(failure))) throw failure;
  const answer: ReadAnswer<Result> = { acknowledged: [], created: 0, updated: 0, failed: [] };
  settled.batch.forEach((changed, position) => {
    const answered = settled.results?.[position];
    if (answered?.status === 'created' || answered?.status === 'updated') {
      answer[answered.status] += 1;
      const { key, index, externalId, storeId, fingerprint, storeIds, pairs } = changed;
      answer.acknowledged.push({ key, index, externalId, storeId, fingerprint, storeIds, pairs });
      return;
    }
    if (answered?.status === 'error' && answered.error) {
      answer.failed.push({ ...answered, index: changed.index });
      return;
    }
    // A status this SDK does not know says nothing it can rely on: unknown, as no answer.
    const error = answered
      ? { code: 'UNKNOWN_STATUS', message: `the service answered status ${answered.status}` }
      : { code: codeOf(failure), message: (failure as Error)?.message ?? String(failure) };
    answer.failed.push({ ...(answered ?? rules.rejected(changed.index, changed.item, '')), index: changed.index, status: 'error', error } as Result);
  });
  return answer;
}
