import { traceCall, traceCallIterable } from '../diagnostics.ts';
import type { ProductItem, ProductResult } from '../schemas/products.ts';
import { BulkUpsertResponseSchema } from '../schemas/products.ts';
import type { Requester } from '../transport/types.ts';
import { collectBulk, streamBulk } from './bulk/engine.ts';
import { productRules } from './bulk/item-checks.ts';
import type { BatchResult, BulkInput, BulkOptions, BulkRoute, BulkUpsertResult, BulkUpsertSummary } from './bulk/types.ts';

export type { BatchResult, BulkInput, BulkOptions, BulkProgress, BulkUpsertResult, BulkUpsertSummary } from './bulk/types.ts';

/** Spec 4.2: POST /products/bulk, at most 500 items per request. */
const PRODUCTS_BULK: BulkRoute<ProductResult, BulkUpsertSummary> = {
  method: 'POST',
  path: '/products/bulk',
  schema: BulkUpsertResponseSchema,
  rules: productRules,
  counters: { created: 'created', updated: 'updated', error: 'errors' },
  emptySummary: () => ({ created: 0, updated: 0, errors: 0 }),
};

/** The catalog: products pushed by the ERP, which is the authority for them (scope `catalog:write`). */
export class CatalogResource {
  readonly #requester: Requester;

  constructor(requester: Requester) {
    this.#requester = requester;
  }

  /**
   * Creates or updates products by `external_id`, in batches, as if the whole input were one batch:
   * one result per input item, in input order (`index` its position in the input). A repeated
   * `external_id` and provably invalid items get an item `VALIDATION_ERROR` and are not sent.
   *
   * Resolves also when items fail (see `summary.errors`). Throws `ConfigurationError` for bad
   * options before any request, and `BulkOperationError` when a whole batch fails after its
   * retries: its `partial` holds the results of every batch that succeeded.
   *
   * @example
   * ```ts
   * const result = await client.catalog.upsertProducts(
   *   [{ external_id: 'SKU-1', name: 'Coffee 500g', price: 32.9, stores: [{ store_id: storeId, stock_quantity: 12.5 }] }],
   *   { onProgress: (p) => console.log(`${p.itemsDone}/${p.itemsTotal}`) },
   * );
   * for (const item of result.results) if (item.status === 'error') console.warn(item.index, item.error?.message);
   * ```
   */
  upsertProducts(items: BulkInput<ProductItem>, options?: BulkOptions): Promise<BulkUpsertResult> {
    return traceCall('catalog.upsertProducts', () => collectBulk(PRODUCTS_BULK, this.#requester, items, options), (result) => ({ ...result.summary }));
  }

  /**
   * As {@link CatalogResource.upsertProducts}, but yields one {@link BatchResult} per batch instead of
   * keeping every result, for inputs too large to hold: each covers the next run of the input, its
   * local rejections included (`sync_id: null` when nothing was sent). An empty input yields nothing.
   *
   * When a batch fails, the windows before it are yielded, then `BulkOperationError` holds those after
   * it that succeeded. Leaving the loop early stops reading the input; batches in flight complete.
   *
   * @example
   * ```ts
   * for await (const batch of client.catalog.upsertBatches(readProductsFromErp(), { concurrency: 2 })) {
   *   await saveSyncLog(batch.sync_id, batch.summary);
   * }
   * ```
   */
  upsertBatches(items: BulkInput<ProductItem>, options?: BulkOptions): AsyncIterable<BatchResult> {
    return traceCallIterable('catalog.upsertBatches', streamBulk(PRODUCTS_BULK, this.#requester, items, options), (batch, counts) => {
      for (const [name, value] of Object.entries(batch.summary)) counts[name] = (counts[name] ?? 0) + value;
    });
  }
}
