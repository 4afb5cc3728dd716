import * as z from 'zod/mini';

/**
 * A string field whose known values are listed for autocompletion, while any other string is still
 * accepted: the service adds values without a new API version, and a receiver must not break on them.
 */
export type OpenEnum<Known extends string> = Known | (string & {});

/** A zod schema for an {@link OpenEnum}: any string passes; `_known` only feeds the type. */
export function openEnum<const Known extends string>(_known: readonly Known[]): z.ZodMiniType<OpenEnum<Known>, OpenEnum<Known>> {
  return z.string() as unknown as z.ZodMiniType<OpenEnum<Known>, OpenEnum<Known>>;
}
