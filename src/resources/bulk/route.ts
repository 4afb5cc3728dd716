import type * as z from 'zod/mini';
import type { HttpMethod } from '../../transport/types.ts';

/** The wire shape every bulk route answers per item (spec 2.4; PATCH /stock adds `store_id`). */
export interface ItemResultShape {
  index: number;
  external_id: string;
  status: string;
  error?: { code: string; message: string };
}

/** The part of a bulk answer the engine reads; the route's summary is recounted from `results`. */
export interface BatchAnswer<Result> {
  sync_id: string;
  results: Result[];
}

/** How one bulk route judges its items before sending them. */
export interface ItemRules<Result extends ItemResultShape> {
  /** Why the item is provably invalid (path and reason, no personal data), or `undefined`. */
  problem(item: unknown): string | undefined;
  /**
   * The key of the route's repeat rule, or `undefined` when the item has no usable key (it is then
   * rejected by `problem`).
   */
  repeatKey(item: unknown): string | undefined;
  /** Message for a later occurrence of a key first seen at `firstIndex`. */
  repeatMessage(item: unknown, firstIndex: number): string;
  /** The result of an item rejected before sending, in the route's wire shape. */
  rejected(index: number, item: unknown, message: string): Result;
  /** Whether an answered result is about the item that was sent at its index. */
  answers(result: Result, item: unknown): boolean;
}

/**
 * Everything that differs between `POST /products/bulk` and `PATCH /stock`. The engine in this
 * folder does the batching, ordering, progress and error handling for both.
 */
export interface BulkRoute<Result extends ItemResultShape, Summary extends object> {
  method: HttpMethod;
  path: string;
  schema: z.ZodMiniType<BatchAnswer<Result>>;
  rules: ItemRules<Result>;
  /** Which summary counter each item `status` adds to; other statuses are counted nowhere. */
  counters: Readonly<Record<string, keyof Summary>>;
  emptySummary(): Summary;
}
