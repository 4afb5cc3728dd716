import type { ItemError } from '../../schemas/item-result.ts';
import type { ItemErrorCode } from '../../errors/codes.ts';
import { validationError, type Issue } from '../http/sandbox-error.ts';
import { isRecord, typeOf } from '../validate.ts';

/** Spec 8 and the stock wire assumption: at most 500 items per request. */
export const MAX_BATCH_ITEMS = 500;

/** `{ items: [...] }` with 1 to 500 elements, else 400 for the whole batch. */
export function readBatch(body: unknown): unknown[] {
  if (!isRecord(body)) throw validationError([{ path: '', message: `the body must be a JSON object with items, got ${typeOf(body)}` }]);
  const items = body.items;
  if (!Array.isArray(items)) throw validationError([{ path: 'items', message: `must be an array, got ${typeOf(items)}` }]);
  if (items.length > MAX_BATCH_ITEMS) {
    throw validationError([{ path: 'items', message: `must have at most ${MAX_BATCH_ITEMS} items, got ${items.length}; split the batch` }], `Too many items: at most ${MAX_BATCH_ITEMS} per request.`);
  }
  return items;
}

/** The per-item error of a batch result. */
export function itemError(code: ItemErrorCode, message: string): ItemError {
  return { code, message };
}

/** One readable message out of an item's validation issues. */
export function describeIssues(issues: Issue[]): string {
  return issues.map((issue) => (issue.path ? `${issue.path} ${issue.message}` : issue.message)).join('; ');
}

/** The item's key for its result entry, even when the item is malformed. */
export function externalIdOf(item: unknown): string {
  return isRecord(item) && typeof item.external_id === 'string' ? item.external_id : '';
}
