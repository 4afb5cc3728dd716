/**
 * Authenticating a delivery against the secrets of its addressee, knowing which secret verified it
 * (an entry keeps its opaque id: copies across two secrets are paired by it), and the hold during a
 * rotation: a new endpoint may deliver before its secret is stored, so while the registry says a
 * rotation is in progress a delivery no known secret verifies waits (up to `HOLD_MS`, reading the
 * tenant's secrets again every `HOLD_STEP_MS`) before it is refused. Every authentic delivery is
 * then answered 2xx.
 */
import { sleep, type Clock } from '../clock.ts';
import { WebhookVerificationError } from '../errors/webhook-verification-error.ts';
import type { AuthenticDelivery } from '../webhooks/parse-event.ts';
import { nodeCrypto } from '../webhooks/crypto.ts';
import { constantTimeEqual, type WebhookHeaders } from '../webhooks/signature.ts';
import { checkBeforeSignature, completeAuthentication, type VerifyWebhookOptions } from '../webhooks/verification-steps.ts';
import type { Addressee, KnownSecret } from './addressee.ts';
import type { DeliverySecrets } from './delivery-secrets.ts';

/** The longest a delivery no known secret verifies is held during a rotation. */
export const HOLD_MS = 5000;
/** How often a held delivery reads its tenant's secrets again. */
export const HOLD_STEP_MS = 250;

/** The tenants registry could not be read while a delivery was being verified: the receiver answers 503. */
export class RegistryUnavailable extends Error {
  constructor(cause: unknown) {
    super('The tenants registry could not be read to verify the delivery.', { cause });
    this.name = 'RegistryUnavailable';
  }
}

/** An authentic delivery and the secret that verified it. */
export interface Authenticated {
  delivery: AuthenticDelivery;
  secret: KnownSecret;
  addressee: Addressee;
}

/**
 * The delivery checked against `secrets` (as `verifyWebhook` does, every digest compared in
 * constant time), and which secret matched. Throws `WebhookVerificationError` as the verifier does.
 */
export function authenticateWith(body: Uint8Array, headers: WebhookHeaders, secrets: readonly KnownSecret[], options: VerifyWebhookOptions): { delivery: AuthenticDelivery; secret: KnownSecret } {
  const { createHmac } = nodeCrypto('createInbox');
  // Without a secret (a tenant whose first secret is not stored yet) nothing can match.
  const pending = checkBeforeSignature(body, headers, secrets.length === 0 ? [NO_SECRET] : secrets.map((each) => each.secret), options);
  const prefix = `${pending.timestamp}.`;
  const digests = pending.secrets.map((key) => createHmac('sha256', key).update(prefix).update(pending.body).digest());
  let matched = -1;
  // Every digest is compared, so the time taken does not tell which secret matched.
  digests.forEach((digest, index) => {
    if (constantTimeEqual(digest, pending.signature) && matched === -1 && secrets.length > 0) matched = index;
  });
  // Throws signature_mismatch when none matched; reads the body of an authentic one.
  const delivery = completeAuthentication(pending, matched === -1 ? [] : [digests[matched]!]);
  return { delivery, secret: secrets[matched]! };
}
// A key that no signature is made with: a tenant with no secret yet refuses as signature_mismatch.
const NO_SECRET = 'whsec_integration-sdk-no-secret-yet';

const mismatched = (error: unknown) => error instanceof WebhookVerificationError && error.reason === 'signature_mismatch';

/**
 * Authenticates against the addressee's secrets; when none verifies, against its secrets read
 * again (a secret added since it was cached), and during a rotation keeps reading them for up to
 * `HOLD_MS`. `null` when the tenant went away meanwhile (404). Throws the verifier's error otherwise.
 */
export async function authenticateDelivery(
  body: Uint8Array,
  headers: WebhookHeaders,
  first: Addressee,
  secrets: DeliverySecrets,
  clock: Clock,
  options: () => VerifyWebhookOptions,
): Promise<Authenticated | null> {
  let addressee = first;
  const attempt = (): Authenticated => ({ ...authenticateWith(body, headers, addressee.secrets, options()), addressee });
  try {
    return attempt();
  } catch (error) {
    if (!mismatched(error) || addressee.tenant === undefined) throw error;
  }
  const heldUntil = clock.now() + HOLD_MS;
  for (let force = false; ; force = true) {
    const again = await secrets.again(addressee, force).catch((error: unknown) => {
      throw new RegistryUnavailable(error);
    });
    if (again === null) return null;
    addressee = again;
    try {
      return attempt();
    } catch (error) {
      if (!mismatched(error) || !addressee.rotating || clock.now() >= heldUntil) throw error;
    }
    await sleep(clock, Math.min(HOLD_STEP_MS, heldUntil - clock.now()));
  }
}
