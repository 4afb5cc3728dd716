import type * as z from 'zod/mini';
import { ConfigurationError } from '../../errors/index.ts';
import type { ProductResult } from '../../schemas/products.ts';
import type { StockItemResult } from '../../schemas/stock.ts';
import { resolveCallOptions } from '../../transport/call-options.ts';
import type { CallOptions, HttpMethod } from '../../transport/types.ts';

/**
 * What the bulk writes accept: an array, any `Iterable` (a generator, a `Set`) or an
 * `AsyncIterable` (an async generator, a Node stream in object mode). Only arrays give
 * `itemsTotal` and `batchesTotal` to `onProgress`.
 *
 * @example
 * ```ts
 * async function* fromErp() { yield { external_id: 'SKU-1', name: 'Coffee', price: 9.9 }; }
 * await client.catalog.upsertProducts(fromErp());
 * ```
 */
export type BulkInput<Item> = readonly Item[] | Iterable<Item> | AsyncIterable<Item>;

/** Counters of `POST /products/bulk`, over every input item (local rejections included). */
export interface BulkUpsertSummary {
  created: number;
  updated: number;
  errors: number;
}

/** Counters of `PATCH /stock`, over every input item (local rejections included). */
export interface StockSummary {
  updated: number;
  errors: number;
}

/** How far a bulk write has got; passed to `onProgress` after every batch. */
interface ProgressCounts {
  /** Items that have a result, locally rejected ones included. */
  itemsDone: number;
  /** Length of the input when it is an array; `undefined` for an `Iterable`/`AsyncIterable`. */
  itemsTotal: number | undefined;
  /** Batches the service has answered. */
  batchesDone: number;
  /** Batches that will be sent, when the input is an array; `undefined` otherwise. */
  batchesTotal: number | undefined;
}

/**
 * Progress of `catalog.upsertProducts` / `catalog.upsertBatches`: counts so far, plus the summary
 * of every item that has a result.
 *
 * @example
 * ```ts
 * await client.catalog.upsertProducts(items, {
 *   onProgress: (p) => console.log(`${p.itemsDone}/${p.itemsTotal ?? '?'} items, ${p.errors} errors`),
 * });
 * ```
 */
export interface BulkProgress extends ProgressCounts, BulkUpsertSummary {}

/**
 * Progress of `stock.set`: counts so far, plus the summary of every item that has a result.
 *
 * @example
 * ```ts
 * await client.stock.set(items, { onProgress: (p) => console.log(p.itemsDone, p.updated, p.errors) });
 * ```
 */
export interface StockProgress extends ProgressCounts, StockSummary {}

/** What `onProgress` receives for a route: the counts so far plus the route's summary. */
export type ProgressOf<Summary> = Summary & ProgressCounts;

/**
 * Options of the bulk writes: the per-call options of every method (applied to **each** batch's
 * request: both time budgets and the retry count are per batch), plus batching and progress.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * await client.catalog.upsertProducts(items, {
 *   batchSize: 200,
 *   concurrency: 2,
 *   onProgress: (p) => console.log(p.itemsDone),
 *   signal: controller.signal,
 *   timeoutMs: 30_000,
 * });
 * ```
 */
export interface BulkOptions<Progress = BulkProgress> extends CallOptions {
  /**
   * Most items sent in one request: an integer from 1 to 500 (the service's limit). Locally
   * rejected items do not count towards it.
   *
   * @default 500
   * @example
   * ```ts
   * await client.catalog.upsertProducts(items, { batchSize: 100 });
   * ```
   */
  batchSize?: number;
  /**
   * Batches in flight at once: an integer ≥ 1. Results still come back in input order.
   *
   * @default 1
   * @example
   * ```ts
   * await client.catalog.upsertProducts(items, { concurrency: 3 });
   * ```
   */
  concurrency?: number;
  /**
   * Called after every batch, in input order, with the counts so far. An exception it throws stops
   * the write and is thrown to the caller (batches already in flight may still be applied).
   *
   * @example
   * ```ts
   * await client.catalog.upsertProducts(items, { onProgress: (p) => console.log(p.batchesDone, p.batchesTotal) });
   * ```
   */
  onProgress?: (progress: Progress) => void;
}

/**
 * Options of `stock.set`: as {@link BulkOptions}, with stock counters in `onProgress`.
 *
 * @example
 * ```ts
 * await client.stock.set(items, { batchSize: 250, onProgress: (p) => console.log(p.updated) });
 * ```
 */
export type StockOptions = BulkOptions<StockProgress>;

/**
 * Result of `catalog.upsertProducts`: the whole input as if it had been one batch.
 * `results[i]` is the result of input item `i` (`results[i].index === i`).
 */
export interface BulkUpsertResult {
  /** One `sync_id` per batch sent, in input order. */
  sync_ids: string[];
  /** Counters over every item covered, local rejections included. */
  summary: BulkUpsertSummary;
  /** One result per item covered, in input order, with global indexes. */
  results: ProductResult[];
}

/**
 * One window of the input yielded by `catalog.upsertBatches`: the items of one batch and the
 * locally rejected items around it, in input order, with global indexes.
 */
export interface BatchResult {
  /** The batch's `sync_id`; `null` when every item of the window was rejected locally. */
  sync_id: string | null;
  /** Counters over every item covered, local rejections included. */
  summary: BulkUpsertSummary;
  /** One result per item covered, in input order, with global indexes. */
  results: ProductResult[];
}

/** Result of `stock.set`: one result per input item, in input order. */
export interface StockResult {
  /** One `sync_id` per batch sent, in input order. */
  sync_ids: string[];
  /** Counters over every item covered, local rejections included. */
  summary: StockSummary;
  /** One result per item covered, in input order, with global indexes. */
  results: StockItemResult[];
}

/** One window of a `PATCH /stock` write (see {@link BatchResult}). */
export interface StockBatchResult {
  /** The batch's `sync_id`; `null` when every item of the window was rejected locally. */
  sync_id: string | null;
  /** Counters over every item covered, local rejections included. */
  summary: StockSummary;
  /** One result per item covered, in input order, with global indexes. */
  results: StockItemResult[];
}

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
  /** The key of the route's repeat rule; `undefined` when the item has none (`problem` rejects it). */
  repeatKey(item: unknown): string | undefined;
  /** Message for a later occurrence of a key first seen at `firstIndex`. */
  repeatMessage(item: unknown, firstIndex: number): string;
  /** The result of an item rejected before sending, in the route's wire shape. */
  rejected(index: number, item: unknown, message: string): Result;
  /** Whether an answered result is about the item that was sent at its index. */
  answers(result: Result, item: unknown): boolean;
}

/** Everything that differs between `POST /products/bulk` and `PATCH /stock`. */
export interface BulkRoute<Result extends ItemResultShape, Summary extends object> {
  method: HttpMethod;
  path: string;
  schema: z.ZodMiniType<BatchAnswer<Result>>;
  rules: ItemRules<Result>;
  /** Which summary counter each item `status` adds to; other statuses are counted nowhere. */
  counters: Readonly<Record<string, keyof Summary>>;
  emptySummary(): Summary;
}

/** The service's limit of items per request (spec 4.2 rule 1; the same for PATCH /stock). */
const MAX_BATCH_SIZE = 500;

/** Bulk options checked, with defaults applied. */
export interface BulkSettings<Progress> {
  batchSize: number;
  concurrency: number;
  onProgress: ((progress: Progress) => void) | undefined;
  /** What every batch's request gets: the per-call options, nothing else. */
  call: CallOptions;
}

function describe(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value;
}

/** Stands in for the client's defaults: only the caller's own values are being checked. */
const ANY_DEFAULTS = { timeoutMs: 1, totalTimeoutMs: 1, maxRetries: 0 };

/**
 * Throws `ConfigurationError` for bad batching options, `InvalidInputError` for bad per-call options,
 * before anything is read or sent: a bad `timeoutMs` must not surface as the first batch's failure.
 */
export function resolveBulkOptions<Progress>(options: BulkOptions<Progress> = {}): BulkSettings<Progress> {
  const { batchSize = MAX_BATCH_SIZE, concurrency = 1, onProgress, signal, timeoutMs, totalTimeoutMs, maxRetries } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new ConfigurationError(
      `batchSize must be an integer from 1 to ${MAX_BATCH_SIZE} (the service's limit per request), got ${describe(batchSize)}`,
    );
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigurationError(`concurrency must be an integer of 1 or more (batches in flight at once), got ${describe(concurrency)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new ConfigurationError(`onProgress must be a function, got ${typeof onProgress}`);
  }
  resolveCallOptions({ signal, timeoutMs, totalTimeoutMs, maxRetries }, ANY_DEFAULTS);
  const call: CallOptions = {};
  if (signal !== undefined) call.signal = signal;
  if (timeoutMs !== undefined) call.timeoutMs = timeoutMs;
  if (totalTimeoutMs !== undefined) call.totalTimeoutMs = totalTimeoutMs;
  if (maxRetries !== undefined) call.maxRetries = maxRetries;
  return { batchSize, concurrency, onProgress, call };
}
