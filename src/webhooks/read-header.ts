import type { DeliveryHeaderName } from './header-names.ts';

/**
 * The headers of a delivery as frameworks hand them over: a Fetch `Headers`, or a Node-style record
 * (`req.headers` of `node:http`, Express, Fastify) whose names may be in any case and whose values
 * may be arrays.
 */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * One header's value, or `undefined` when it is absent.
 *
 * A header that arrives more than once (an array value, or two keys differing only in case) is
 * joined with `", "`, which is what Fetch `Headers.get` and `node:http` do with repeats. The joined
 * value then fails its format check: a delivery never carries a header twice, so a repeat means a
 * proxy or a forger added one, and picking either copy would be a guess.
 */
export function readHeader(headers: WebhookHeaders, name: DeliveryHeaderName): string | undefined {
  if (isFetchHeaders(headers)) return headers.get(name) ?? undefined;
  const wanted = name.toLowerCase();
  let found: string | undefined;
  for (const key of Object.keys(headers)) {
    // Only a key of the right length is lower-cased: a receiver's record holds a dozen others.
    const value = key.length === wanted.length && key.toLowerCase() === wanted ? headers[key] : undefined;
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    found = found === undefined ? text : `${found}, ${text}`;
  }
  return found;
}

// Duck-typed rather than `instanceof Headers`: undici, Bun, Workers and polyfills each bring their own.
function isFetchHeaders(headers: WebhookHeaders): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}
