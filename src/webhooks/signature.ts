/**
 * What a delivery's signature rests on (spec 6.1, 6.2): the header names and how a header is read
 * from any framework's headers, the timestamp and its window, the signature's form, the secrets,
 * byte comparison in constant time, and the typed failure each check throws.
 */
import { ConfigurationError } from '../errors/integration-error.ts';
import { WebhookVerificationError, type WebhookVerificationReason } from '../errors/webhook-verification-error.ts';

/**
 * Spec 6.1: the headers of every delivery, spelled as the service sends them. Lookups are
 * case-insensitive (HTTP header names are), so the verifier lower-cases these before comparing.
 */
export const DELIVERY_HEADERS = {
  event: 'X-Service-Event',
  deliveryId: 'X-Service-Delivery-Id',
  timestamp: 'X-Service-Timestamp',
  signature: 'X-Service-Signature-256',
} as const;

export type DeliveryHeaderName = (typeof DELIVERY_HEADERS)[keyof typeof DELIVERY_HEADERS];

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

const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/** The 32 bytes of an `X-Service-Signature-256` value of the form `sha256=<64 lowercase hex>`. */
export function readSignature(value: string): Uint8Array {
  if (!SIGNATURE.test(value)) {
    return fail(
      'invalid_signature_format',
      'X-Service-Signature-256 is not sha256=<64 lowercase hex digits>: pass the header value exactly as received, once.',
    );
  }
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = (hexDigit(value.charCodeAt(7 + i * 2)) << 4) | hexDigit(value.charCodeAt(8 + i * 2));
  return bytes;
}

// One of 0-9a-f, as the pattern above already ensured.
function hexDigit(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

const encoder = new TextEncoder();

/**
 * Spec 6.2: the signed text is `<timestamp>.<raw_body>`, the timestamp as it stands in the header,
 * in one buffer for Web Crypto (node:crypto is fed the two parts instead, see verify-webhook.ts).
 */
export function signedContent(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(`${timestamp}.${body}`);
  const prefix = encoder.encode(`${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}

const DIGITS = /^[0-9]+$/;

/**
 * The `X-Service-Timestamp` value as epoch seconds. Only plain ASCII digits count as an integer:
 * `1.5e9`, `1795002201.0`, a sign or surrounding spaces are refused rather than guessed at.
 */
export function readTimestamp(value: string): number {
  const seconds = DIGITS.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seconds)) {
    fail(
      'invalid_timestamp',
      'X-Service-Timestamp is not integer epoch seconds: pass the header value exactly as received.',
    );
  }
  return seconds;
}

/** Rejects a delivery signed too long ago (a replay) or too far ahead (a wrong clock): both directions. */
export function checkTolerance(timestamp: number, nowSeconds: number, toleranceSeconds: number): void {
  const age = nowSeconds - timestamp;
  if (Math.abs(age) <= toleranceSeconds) return;
  const when = age > 0 ? `${age} s in the past` : `${-age} s in the future`;
  fail(
    'timestamp_out_of_tolerance',
    `X-Service-Timestamp is ${when}, outside the ${toleranceSeconds} s tolerance: check the server clock (NTP), and verify on arrival, not later from a queue.`,
  );
}

/** Spec 6.2 and 8: the recommended window is 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The current time in whole epoch seconds, floored like the timestamps the service sends. */
export function epochSeconds(now: Date | number | undefined): number {
  const ms = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new ConfigurationError('now must be a valid Date or epoch milliseconds (as Date.now() gives).');
  }
  return Math.floor(ms / 1000);
}

/** `toleranceSeconds` checked once, so that a NaN can never accept every timestamp. */
export function toleranceOf(toleranceSeconds: number | undefined): number {
  const tolerance = toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new ConfigurationError('toleranceSeconds must be a number >= 0.');
  }
  return tolerance;
}

/**
 * The endpoint secret (`whsec_...`, shown once when the endpoint was created), or several while
 * rotating: a delivery is genuine when any of them matches.
 */
export type WebhookSecret = string | readonly string[];

/** The secrets to try, refusing an empty one (an unset environment variable, usually). */
export function secretList(secret: WebhookSecret): readonly string[] {
  const list: readonly unknown[] = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [];
  if (list.length === 0 || !list.every((item) => typeof item === 'string' && item.length > 0)) {
    throw new ConfigurationError(
      'The webhook secret is empty or missing: pass the whsec_ value shown when the endpoint was created (is the environment variable set?).',
    );
  }
  return list as readonly string[];
}

/** Hints about the configured secrets for a signature mismatch, without revealing them. */
export function secretHints(secrets: readonly string[]): string {
  let hints = '';
  if (secrets.some((secret) => secret !== secret.trim())) hints += ' A secret has surrounding whitespace (a line break from an env file?).';
  if (!secrets.some((secret) => secret.startsWith('whsec_'))) hints += ' No secret starts with whsec_: is it the API key?';
  return hints;
}

/**
 * Byte equality whose running time does not depend on where the inputs differ (spec 6.2 rule 3).
 * Different lengths give `false` without throwing and without returning early.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  let difference = a.length ^ b.length;
  for (let i = 0; i < length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

/** Rejects a delivery. `message` says what to fix and never holds the secret, a signature or the body. */
export function fail(reason: WebhookVerificationReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

export function failMissingHeader(header: string): never {
  return fail('missing_header', `The ${header} header is missing: is a proxy stripping X-Service-* headers, or is this not a delivery?`);
}
