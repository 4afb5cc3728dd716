import { ConfigurationError } from '../errors/integration-error.ts';
import type { WebhookEvent } from '../schemas/events.ts';
import { epochSeconds, toleranceOf } from './clock.ts';
import { constantTimeEqual } from './constant-time.ts';
import { fail, failMissingHeader } from './fail.ts';
import { DELIVERY_HEADERS } from './header-names.ts';
import type { VerifyWebhookOptions } from './options.ts';
import { parseEvent } from './parse-event.ts';
import { rawBodyOf, type WebhookRawBody } from './raw-body.ts';
import { readHeader, type WebhookHeaders } from './read-header.ts';
import { secretHints, secretList, type WebhookSecret } from './secrets.ts';
import { readSignature } from './signature.ts';
import { readTimestamp, checkTolerance } from './timestamp.ts';

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
  const { secrets, signature, timestamp } = checkDeliveryHeaders(headers, secret, options);
  return { body: rawBodyOf(rawBody), headers, secrets, signature, timestamp };
}

/**
 * What can be checked before the body is read: the secret, the headers' presence and form, and
 * the timestamp window. Receivers run it first, so a forged or stale POST is refused unread.
 */
export function checkDeliveryHeaders(
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options: VerifyWebhookOptions | undefined,
): { secrets: readonly string[]; signature: Uint8Array; timestamp: string } {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ConfigurationError('verifyWebhook options must be an object ({ toleranceSeconds, now }) or left out');
  }
  const secrets = secretList(secret);
  const toleranceSeconds = toleranceOf(options?.toleranceSeconds);
  const nowSeconds = epochSeconds(options?.now);
  if (typeof headers !== 'object' || headers === null) {
    fail('missing_header', 'No headers were given: pass the request headers (a Headers object or a record) as they arrived.');
  }

  const signatureHeader = readHeader(headers, DELIVERY_HEADERS.signature);
  const timestampHeader = readHeader(headers, DELIVERY_HEADERS.timestamp);
  if (signatureHeader === undefined) return failMissingHeader(DELIVERY_HEADERS.signature);
  if (timestampHeader === undefined) return failMissingHeader(DELIVERY_HEADERS.timestamp);

  checkTolerance(readTimestamp(timestampHeader), nowSeconds, toleranceSeconds);
  const signature = readSignature(signatureHeader);
  return { secrets, signature, timestamp: timestampHeader };
}

/** Given one HMAC per secret, accepts the signature if any matches, then parses the body. */
export function completeVerification(delivery: PendingDelivery, digests: readonly Uint8Array[]): WebhookEvent {
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
  return parseEvent(delivery.body, delivery.headers);
}
