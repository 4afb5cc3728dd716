import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { ItemErrorSchema } from './item-result.ts';
import { openEnum } from './open-enum.ts';

/** Spec 2.3: optional per-store stock and price of a product, written in the same call. */
export interface StoreBlock {
  /** UUID of a store inside the key's `store_ids`, else the item fails with `FORBIDDEN_STORE`. */
  store_id: string;
  /** Up to 3 decimal places (fractional units such as weight); never rounded. */
  stock_quantity?: number;
  price_override?: number;
  active?: boolean;
}

/**
 * Spec 2.2: one element of `items` in POST /products/bulk. `external_id` is the upsert key.
 * `name` and `price` are required when the `external_id` is new (wire assumption).
 */
export interface ProductItem {
  external_id: string;
  name?: string;
  price?: number;
  /** Stored only when longer than 5 characters; shorter values become null. */
  gtin?: string | null;
  category?: string;
  stores?: StoreBlock[];
}

/** Spec 2.4: one entry per input item. */
export const ProductResultSchema = z.looseObject({
  index: z.number(),
  external_id: z.string(),
  status: openEnum(['created', 'updated', 'error']),
  error: z.optional(ItemErrorSchema),
});
/** The result of one product item: `{ index, external_id, status, error? }`, `index` its position in the whole input. */
export type ProductResult = KnownFields<z.infer<typeof ProductResultSchema>>;

/** Spec 2.4: answer of POST /products/bulk (200 also when items failed). */
export const BulkUpsertResponseSchema = z.looseObject({
  sync_id: z.string(),
  summary: z.looseObject({ created: z.number(), updated: z.number(), errors: z.number() }),
  results: z.array(ProductResultSchema),
});
/** The service's answer to one POST /products/bulk request. */
export type BulkUpsertResponse = KnownFields<z.infer<typeof BulkUpsertResponseSchema>>;
