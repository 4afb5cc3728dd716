import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { openEnum } from './open-enum.ts';

/** `results[].error` of a bulk answer: present only when `status` is `error`. */
export const ItemErrorSchema = z.looseObject({
  code: openEnum(['VALIDATION_ERROR', 'FORBIDDEN_STORE', 'STORE_WRITE_FAILED', 'INTERNAL', 'PRODUCT_NOT_FOUND']),
  message: z.string(),
});
/** Why one item of a bulk write failed: `{ code, message }` (`VALIDATION_ERROR`, `FORBIDDEN_STORE`, `STORE_WRITE_FAILED`, `INTERNAL`, `PRODUCT_NOT_FOUND`, or a newer code). */
export type ItemError = KnownFields<z.infer<typeof ItemErrorSchema>>;
