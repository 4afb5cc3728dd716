import { createHmac, randomBytes } from 'node:crypto';

/**
 * Spec 6.2: `sha256=` + lowercase hex HMAC-SHA256, keyed with the endpoint secret, of
 * `<timestamp>.<raw_body>`. Written here from the spec, not taken from the SDK's verifier, so the
 * tests that verify sandbox deliveries with the SDK are an independent check.
 */
export function signDelivery(secret: string, timestamp: number, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

/** A new endpoint secret; unpredictable even when the sandbox's random source is seeded. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}
