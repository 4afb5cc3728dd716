import { IntegrationError } from './integration-error.ts';

/** Why a webhook delivery was rejected, in the order the checks run. */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature_format'
  | 'signature_mismatch'
  | 'invalid_payload'
  | 'header_mismatch';

/**
 * A webhook delivery failed verification. `reason` says which check failed; the message says what
 * to fix. Never holds the secret or the body.
 *
 * @example
 * ```ts
 * try {
 *   verifyWebhook(rawBody, headers, secret);
 * } catch (error) {
 *   if (error instanceof WebhookVerificationError) return new Response(error.reason, { status: 400 });
 *   throw error;
 * }
 * ```
 */
export class WebhookVerificationError extends IntegrationError {
  static override readonly errorName: string = 'WebhookVerificationError';
  /** Which check failed, e.g. `signature_mismatch`. */
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}
