/**
 * The type of an answer read tolerantly: the fields this SDK version knows, deep, without the index
 * signature zod's `looseObject` infers, so that a misspelt field (`health.scopez`) is a compile
 * error. At run time an answer still holds every field the service sent, the ones this version does
 * not know included: read those through {@link WithUnknownFields}. An object with no named field at
 * all (an order's `metadata`) is a map of the merchant's own keys, and stays one.
 */
export type KnownFields<T> = T extends readonly (infer Element)[]
  ? KnownFields<Element>[]
  : T extends object
    ? string extends keyof T
      ? [keyof Named<T>] extends [never]
        ? T
        : { [K in keyof Named<T>]: KnownFields<Named<T>[K]> }
      : T
    : T;

/** `T`'s named fields, optional ones kept optional (a homomorphic mapping keeps the modifiers). */
type Named<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/**
 * An answer (or any object inside one) seen with the fields this SDK version does not type: the
 * service added them, the SDK kept them, and each reads as `unknown` until you check it. A cast
 * you write where you mean it, so that a typo elsewhere stays a compile error.
 *
 * @example
 * ```ts
 * import type { Health, WithUnknownFields } from 'integration-sdk';
 *
 * const health = await client.health();
 * const region = (health as WithUnknownFields<Health>).region; // unknown: a field newer than this SDK
 * if (typeof region === 'string') console.log(region);
 * ```
 */
export type WithUnknownFields<T extends object> = T & { readonly [field: string]: unknown };
