import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';

/** Spec 2.10: `{ error: { code, message, details? } }`; `details` is omitted, never null. */
export const ErrorEnvelopeSchema = z.looseObject({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.optional(z.unknown()),
  }),
});
/** The error envelope of every non-2xx answer (spec 2.10). */
export type ErrorEnvelope = KnownFields<z.infer<typeof ErrorEnvelopeSchema>>;
