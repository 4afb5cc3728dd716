import { WebhookVerificationError, type WebhookVerificationReason } from '../errors/webhook-verification-error.ts';

/** Rejects a delivery. `message` says what to fix and never holds the secret, a signature or the body. */
export function fail(reason: WebhookVerificationReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

export function failMissingHeader(header: string): never {
  return fail('missing_header', `The ${header} header is missing: is a proxy stripping X-Service-* headers, or is this not a delivery?`);
}
