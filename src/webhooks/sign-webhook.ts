import { ConfigurationError } from '../errors/integration-error.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import type { KnownEventName } from '../schemas/events.ts';
import type { OpenEnum } from '../schemas/open-enum.ts';
import { nodeCrypto } from './crypto.ts';
import { DELIVERY_HEADERS, secretList } from './signature.ts';

/** What to deliver: the event name and its `data`, as in the body the service sends. */
export interface WebhookPayload {
  /** The event name, e.g. `order.created`. */
  event: OpenEnum<KnownEventName>;
  /** The event's `data` (an order, a status summary…). */
  data: unknown;
}

/** Options of {@link signWebhook}. */
export interface SignWebhookOptions {
  /** The event name and its `data`; `delivery_id` and `ts` are added as the service adds them. */
  payload: WebhookPayload;
  /** The endpoint's `whsec_` secret. */
  secret: string;
  /**
   * When the delivery is signed: a `Date`, or integer epoch seconds as in `X-Service-Timestamp`.
   * @default now
   */
  timestamp?: Date | number;
  /**
   * `X-Service-Delivery-Id` and the body's `delivery_id`.
   * @default crypto.randomUUID()
   */
  deliveryId?: string;
}

/**
 * Spec 6.1: the headers of a delivery, named as the service sends them. A type alias rather than an
 * interface so that it fits `fetch`'s `HeadersInit` and header records as is.
 */
export type SignedWebhookHeaders = {
  'Content-Type': 'application/json';
  'X-Service-Event': string;
  'X-Service-Delivery-Id': string;
  'X-Service-Timestamp': string;
  'X-Service-Signature-256': string;
};

/** A delivery as the service would send it: pass `body` and `headers` unchanged to your receiver. */
export interface SignedWebhook {
  /** The JSON body `{ event, delivery_id, ts, data }`: send it byte for byte. */
  body: string;
  /** The five delivery headers, the signature included. */
  headers: SignedWebhookHeaders;
}

// Epoch seconds stay below this until the year 5138; a larger number is almost surely milliseconds.
const LARGEST_PLAUSIBLE_SECONDS = 1e11;

/**
 * Builds a delivery exactly as the service sends it (spec 6.1 and 6.2), for testing your own
 * receiver: body `{ event, delivery_id, ts, data }` and the five headers, signed with `secret`.
 * Synchronous, with `node:crypto` (Node, Bun, Deno).
 *
 * @example
 * ```ts
 * import { signWebhook } from 'integration-sdk/webhooks';
 *
 * const { body, headers } = signWebhook({
 *   payload: { event: 'webhook.test', data: { webhook_id: 'w_1', message: 'hello' } },
 *   secret: 'whsec_test',
 * });
 * const response = await fetch('http://127.0.0.1:3000/webhooks', { method: 'POST', headers: { ...headers }, body });
 * ```
 */
export function signWebhook(options: SignWebhookOptions): SignedWebhook {
  const { createHmac } = nodeCrypto('signWebhook');
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('signWebhook needs an options object: { payload, secret }.');
  }
  const [secret] = secretList(options.secret);
  const { event, data } = payloadOf(options.payload);
  const ts = timestampSeconds(options.timestamp);
  const deliveryId = options.deliveryId ?? globalThis.crypto.randomUUID();
  checkHeaderValue('deliveryId', deliveryId);
  const body = serialise({ event, delivery_id: deliveryId, ts, data });
  const timestamp = String(ts);
  const digest = createHmac('sha256', secret as string).update(`${timestamp}.`).update(body).digest('hex');
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      [DELIVERY_HEADERS.event]: event,
      [DELIVERY_HEADERS.deliveryId]: deliveryId,
      [DELIVERY_HEADERS.timestamp]: timestamp,
      [DELIVERY_HEADERS.signature]: `sha256=${digest}`,
    },
  };
}

// The value is copied into a header, where CR/LF would start a header of its own (or split the response).
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function checkHeaderValue(path: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value === '' || CONTROL_CHARACTER.test(value)) {
    throw new InvalidInputError([{ path, message: 'must be a non-empty string without control characters such as CR or LF (it becomes a header value)' }]);
  }
}

function payloadOf(payload: WebhookPayload | undefined): WebhookPayload {
  if (typeof payload !== 'object' || payload === null) {
    throw new InvalidInputError([{ path: 'payload', message: 'must be an object { event, data }' }]);
  }
  // Each read once: what is checked is what is signed.
  const { event, data } = payload;
  checkHeaderValue('payload.event', event);
  // JSON would leave these out: the body would have no `data`, which no receiver accepts.
  if (data === undefined || typeof data === 'function' || typeof data === 'symbol') {
    throw new InvalidInputError([{ path: 'payload.data', message: "is required: the event's data, which JSON can carry (not undefined, a function or a symbol)" }]);
  }
  return { event, data };
}

function serialise(body: Record<string, unknown>): string {
  try {
    return JSON.stringify(body);
  } catch {
    // JSON.stringify's own message may quote property names of the data: say only what to fix.
    throw new InvalidInputError([{ path: 'payload.data', message: 'cannot be sent as JSON (a BigInt, a cycle, or a toJSON that throws)' }]);
  }
}

function timestampSeconds(timestamp: Date | number | undefined): number {
  if (timestamp === undefined) return Math.floor(Date.now() / 1000);
  const seconds = timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : timestamp;
  if (Number.isSafeInteger(seconds) && seconds >= 0 && seconds < LARGEST_PLAUSIBLE_SECONDS) return seconds;
  const hint = seconds >= LARGEST_PLAUSIBLE_SECONDS ? ' (this looks like milliseconds)' : '';
  throw new ConfigurationError(`timestamp must be a valid Date or integer epoch seconds${hint}.`);
}
