import { ConfigurationError } from '../errors/integration-error.ts';
import { WebhookVerificationError } from '../errors/webhook-verification-error.ts';
import { isKnownEventName } from '../schemas/events.ts';
import { BodyLimitError } from '../bounded-body.ts';
import type { KnownWebhookEvent, WebhookHandlerOptions } from './handler-types.ts';
import type { WebhookRawBody } from './raw-body.ts';
import type { WebhookHeaders } from './read-header.ts';
import { checkDeliveryHeaders } from './verification-steps.ts';
import { verifyWebhookAsync } from './verify-webhook-async.ts';

/**
 * A delivery as any server hands it over. The body is read only once the method and the headers
 * are right, and `readBody` enforces the body limits (a `BodyLimitError` when they are passed).
 */
export interface IncomingDelivery {
  readonly method: string | undefined;
  readonly headers: WebhookHeaders;
  readBody(): Promise<WebhookRawBody>;
}

/** What to answer, before it is written as a Fetch `Response` or onto a Node response. */
export interface DeliveryAnswer {
  readonly status: number;
  /** Never personal data: the service discards it anyway (spec 6.3 rule 5). */
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The receiver rules of spec 6.2/6.3 for one delivery, shared by the Fetch handler and the Node
 * listener: verify over the raw bytes first (400), skip unknown events and already seen delivery
 * ids (2xx), and answer 2xx only once `onEvent` has resolved (500 if it throws, so the service retries).
 */
export async function answerDelivery(incoming: IncomingDelivery, options: WebhookHandlerOptions): Promise<DeliveryAnswer> {
  if (incoming.method?.toUpperCase() !== 'POST') {
    return { status: 405, body: 'Method Not Allowed', headers: { Allow: 'POST' } };
  }
  const verifyOptions = { toleranceSeconds: options.toleranceSeconds, now: options.now };
  try {
    // Headers and timestamp first: a request that cannot be a delivery costs no body read.
    checkDeliveryHeaders(incoming.headers, options.secret, verifyOptions);
    const event = await verifyWebhookAsync(await incoming.readBody(), incoming.headers, options.secret, verifyOptions);
    if (!isKnownEventName(event.event)) return { status: 200, body: 'ignored: unknown event' };
    if (await options.isDuplicate?.(event.delivery_id)) return { status: 200, body: 'duplicate' };
    await options.onEvent(event as KnownWebhookEvent);
    return { status: 200, body: 'OK' };
  } catch (error) {
    reportError(options, error);
    if (error instanceof WebhookVerificationError) return { status: 400, body: error.reason };
    if (error instanceof BodyLimitError) {
      // The rest of the body stays unread: closing the connection is the only way not to read it.
      return { status: error.status, body: error.status === 413 ? 'body_too_large' : 'body_timeout', headers: { Connection: 'close' } };
    }
    // A setup mistake of the receiver (e.g. a body parsed by middleware) is worth reading in the answer;
    // anything else may come from the user's code and hold personal data.
    return { status: 500, body: error instanceof ConfigurationError ? error.message : 'processing failed' };
  }
}

/** Passes an error to `onError`, if given. */
export function reportError(options: WebhookHandlerOptions, error: unknown): void {
  try {
    options.onError?.(error);
  } catch {
    // A failing logger must not change the answer.
  }
}
