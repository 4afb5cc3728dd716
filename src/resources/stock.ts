import { traceCall } from '../diagnostics.ts';
import type { StockItem, StockItemResult } from '../schemas/stock.ts';
import { StockResponseSchema } from '../schemas/stock.ts';
import type { Requester } from '../transport/types.ts';
import { collectBulk } from './bulk/engine.ts';
import { stockRules } from './bulk/item-checks.ts';
import type { BulkInput, BulkRoute, StockOptions, StockResult, StockSummary } from './bulk/types.ts';

export type { BulkInput, StockBatchResult, StockOptions, StockProgress, StockResult, StockSummary } from './bulk/types.ts';

/** Spec 4.3 and wire assumption "Stock: PATCH /stock": at most 500 items per request. */
const STOCK_PATCH: BulkRoute<StockItemResult, StockSummary> = {
  method: 'PATCH',
  path: '/stock',
  schema: StockResponseSchema,
  rules: stockRules,
  counters: { updated: 'updated', error: 'errors' },
  emptySummary: () => ({ updated: 0, errors: 0 }),
};

/** Absolute stock and price per store (scope `stock:write`). */
export class StockResource {
  readonly #requester: Requester;

  constructor(requester: Requester) {
    this.#requester = requester;
  }

  /**
   * Sets absolute stock, per-store price (`null` removes it) and activation, in batches, as if the
   * whole input were one batch: one result per input item, in input order. A repeated (`external_id`,
   * `store_id`) pair and invalid items get an item `VALIDATION_ERROR` and are not sent.
   *
   * Resolves also when items fail (see `summary.errors`). Throws `BulkOperationError` when a whole
   * batch fails after its retries: its `partial` holds the results of every batch that succeeded.
   *
   * @example
   * ```ts
   * const result = await client.stock.set([
   *   { external_id: 'SKU-1', store_id: storeId, stock_quantity: 12.345 },
   *   { external_id: 'SKU-2', store_id: storeId, price_override: null },
   * ]);
   * console.log(result.summary.updated, 'updated,', result.summary.errors, 'errors');
   * ```
   */
  set(items: BulkInput<StockItem>, options?: StockOptions): Promise<StockResult> {
    return traceCall('stock.set', () => collectBulk(STOCK_PATCH, this.#requester, items, options), (result) => ({ ...result.summary }));
  }
}
