import {
  checkTolerance,
  constantTimeEqual,
  DELIVERY_HEADERS,
  epochSeconds,
  fail,
  failMissingHeader,
  readHeader,
  readSignature,
  readTimestamp,
  secretHints,
  secretList,
  toleranceOf,
  type WebhookHeaders,
  type WebhookSecret,
} from './signature.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import type { WebhookEvent } from '../schemas/events.ts';
import { type AuthenticDelivery, parseEvent, readAuthenticDelivery } from './parse-event.ts';

/** Options of {@link verifyWebhook} and {@link verifyWebhookAsync}. */
export interface VerifyWebhookOptions {
  /**
   * How far `X-Service-Timestamp` may be from now, in seconds, in either direction.
   * @default 300
   */
  toleranceSeconds?: number;
  /**
   * The clock to compare the timestamp with: a `Date`, or milliseconds since the epoch as
   * `Date.now()` gives. For tests and replays.
   * @default the current time
   */
  now?: Date | number;
}

/**
 * The body exactly as received. A Node `Buffer` is a `Uint8Array`; a string is UTF-8 encoded, so
 * pass a string only when the framework decoded the bytes as UTF-8 without changing them.
 */
export type WebhookRawBody = string | Uint8Array | ArrayBuffer;

/**
 * The body as given, bytes or text (a string is signed and parsed as its UTF-8 bytes, never copied
 * into a buffer of its own for node:crypto). A parsed object is refused: its bytes are gone.
 */
export function rawBodyOf(rawBody: WebhookRawBody): string | Uint8Array {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  return fail(
    'invalid_payload',
    'The body was parsed before verifying, but the signature covers the raw bytes: pass a string, Uint8Array or Buffer ' +
      "(express.raw({ type: 'application/json' }) in Express, await request.text() with a Request).",
  );
}

/**
 * Everything both verifiers share: they differ only in how they compute HMAC-SHA256 (node:crypto or
 * Web Crypto), which happens between {@link checkBeforeSignature} and {@link completeVerification}.
 */
export interface PendingDelivery {
  /** The raw body as given: the signed bytes, or a string signed as its UTF-8 bytes. */
  readonly body: string | Uint8Array;
  readonly headers: WebhookHeaders;
  readonly secrets: readonly string[];
  /** The `X-Service-Timestamp` value: the signed content is `<timestamp>.<raw body>`. */
  readonly timestamp: string;
  /** The 32 bytes of the received signature. */
  readonly signature: Uint8Array;
}

/** The checks before any cryptography, in the order the SDK surface fixes. */
export function checkBeforeSignature(
  rawBody: WebhookRawBody,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options: VerifyWebhookOptions,
): PendingDelivery {
  const settings = settingsOf(secret, options);
  const body = rawBodyOf(rawBody);
  return { body, headers, secrets: settings.secrets, ...checkHeaders(headers, settings) };
}

/**
 * Every check that needs no body: a receiver runs it before reading one, so a request without a
 * delivery's headers, or from outside the timestamp window, costs no body read at all.
 */
export function checkDeliveryHeaders(headers: WebhookHeaders, secret: WebhookSecret, options: VerifyWebhookOptions): void {
  checkHeaders(headers, settingsOf(secret, options));
}

interface Settings {
  secrets: readonly string[];
  toleranceSeconds: number;
  nowSeconds: number;
}

function settingsOf(secret: WebhookSecret, options: VerifyWebhookOptions): Settings {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('The verify options must be an object such as { toleranceSeconds: 300 }, or left out.');
  }
  return { secrets: secretList(secret), toleranceSeconds: toleranceOf(options.toleranceSeconds), nowSeconds: epochSeconds(options.now) };
}

function checkHeaders(headers: WebhookHeaders, settings: Settings): { timestamp: string; signature: Uint8Array } {
  if (typeof headers !== 'object' || headers === null) {
    throw new InvalidInputError([{ path: 'headers', message: 'must be a Fetch Headers or a record of the request headers (req.headers)' }]);
  }
  const signatureHeader = readHeader(headers, DELIVERY_HEADERS.signature);
  const timestampHeader = readHeader(headers, DELIVERY_HEADERS.timestamp);
  if (signatureHeader === undefined) return failMissingHeader(DELIVERY_HEADERS.signature);
  if (timestampHeader === undefined) return failMissingHeader(DELIVERY_HEADERS.timestamp);

  checkTolerance(readTimestamp(timestampHeader), settings.nowSeconds, settings.toleranceSeconds);
  return { signature: readSignature(signatureHeader), timestamp: timestampHeader };
}

/** Given one HMAC per secret, accepts the signature if any matches, then parses the body. */
export function completeVerification(delivery: PendingDelivery, digests: readonly Uint8Array[]): WebhookEvent {
  checkSignature(delivery, digests);
  return parseEvent(delivery.body, delivery.headers);
}

/**
 * Given one HMAC per secret, accepts the signature if any matches, then reads the body without
 * refusing a shape the SDK did not expect: for receivers that keep every authentic delivery.
 */
export function completeAuthentication(delivery: PendingDelivery, digests: readonly Uint8Array[]): AuthenticDelivery {
  checkSignature(delivery, digests);
  return readAuthenticDelivery(delivery.body, delivery.headers, Number(delivery.timestamp));
}

function checkSignature(delivery: PendingDelivery, digests: readonly Uint8Array[]): void {
  // Every digest is compared, so the time taken does not tell which secret matched.
  let matched = false;
  for (const digest of digests) matched = constantTimeEqual(digest, delivery.signature) || matched;
  if (!matched) {
    fail(
      'signature_mismatch',
      'No signature matches: was the body parsed and re-serialised before verifying? Use the raw bytes. ' +
        'Is the secret the whsec_ value shown at creation, without whitespace?' +
        secretHints(delivery.secrets),
    );
  }
}
