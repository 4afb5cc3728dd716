import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { ItemErrorSchema } from './item-result.ts';
import { openEnum } from './open-enum.ts';

/** One element of `items` in PATCH /stock (wire assumption): absolute values for one store. */
export interface StockItem {
  external_id: string;
  store_id: string;
  /** Up to 3 decimal places; never rounded. */
  stock_quantity?: number;
  /** `null` removes the per-store price. */
  price_override?: number | null;
  active?: boolean;
}

/** One entry of `results` in the PATCH /stock answer (wire assumption). */
export const StockResultSchema = z.looseObject({
  index: z.number(),
  external_id: z.string(),
  store_id: z.string(),
  status: openEnum(['updated', 'error']),
  error: z.optional(ItemErrorSchema),
});
/** The result of one stock item: `{ index, external_id, store_id, status, error? }`. */
export type StockItemResult = KnownFields<z.infer<typeof StockResultSchema>>;

/** Answer of PATCH /stock (wire assumption; 200 also when items failed). */
export const StockResponseSchema = z.looseObject({
  sync_id: z.string(),
  summary: z.looseObject({ updated: z.number(), errors: z.number() }),
  results: z.array(StockResultSchema),
});
/** The service's answer to one PATCH /stock request. */
export type StockResponse = KnownFields<z.infer<typeof StockResponseSchema>>;
