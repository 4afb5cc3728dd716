import { BodyLimitError, DEFAULT_BODY_TIMEOUT_MS, readWebBody } from '../bounded-body.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { WebhookVerificationError } from '../errors/webhook-verification-error.ts';
import { traceInbox } from '../diagnostics.ts';
import type { Clock } from '../clock.ts';
import { isKnownEventName } from '../schemas/events.ts';
import { checkDeliveryHeaders } from '../webhooks/verification-steps.ts';
import { readRawNodeBody, type NodeRequestLike, type NodeResponseLike } from '../webhooks/receiver.ts';
import type { WebhookHeaders } from '../webhooks/signature.ts';
import { authenticateDelivery, RegistryUnavailable } from './authenticate.ts';
import type { DeliverySecrets } from './delivery-secrets.ts';
import { pairAfterOf } from './copies.ts';
import type { InboxStore } from './store.ts';
import { StoreTimeout, withinTime } from './timeouts.ts';

/** The largest body the inbox reads; a larger one answers 413 (the service's orders are far smaller). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The receiving side: a Fetch handler, with `.node` for node:http and Express. */
export interface InboxHandler {
  (request: Request): Promise<Response>;
  /** The same rules as a node:http / Express listener `(req, res)`. */
  node: (req: NodeRequestLike, res: NodeResponseLike) => void;
}

export interface ReceiveOptions {
  store: InboxStore;
  /** Whose delivery a request is and what may have signed it. */
  secrets: DeliverySecrets;
  toleranceSeconds: number | undefined;
  storeTimeoutMs: number;
  /** Where an authentic delivery whose body does not match the schema goes. */
  invalidPayload: 'dead' | 'handler';
  clock: Clock;
  /** Told after each delivery stored, so that a worker in this process wakes at once. */
  onStored: () => void;
  onError: ((error: unknown) => void) | undefined;
}

type Outcome = 'stored' | 'duplicate' | 'rejected' | 'too_large' | 'unavailable' | 'unknown_tenant';

interface Answer {
  status: number;
  body: string;
  outcome?: Outcome;
}

interface Incoming {
  method: string | undefined;
  /** As received: absolute (Fetch) or path and query (node:http). */
  url: string;
  headers: WebhookHeaders;
  /** Declared `Content-Length`, if any. */
  declaredLength: number | undefined;
  /** Reads at most MAX_BODY_BYTES within the body timeout, else throws BodyLimitError. */
  readBody(): Promise<Uint8Array>;
}

/** Verify, store durably, then answer: the inbox's version of the spec 6.3 receiver rules. */
export function createInboxHandler(options: ReceiveOptions): InboxHandler {
  const limits = { maxBodyBytes: MAX_BODY_BYTES, bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS, clock: options.clock };
  const answer = (incoming: Incoming) =>
    traceInbox({ kind: 'received' }, async (context) => {
      let result: Answer;
      try {
        result = await answerDelivery(incoming, options, context);
      } catch (error) {
        // Whatever went wrong, the service gets an answer it retries, and never a 2xx without the row.
        report(options, error);
        result = { status: 500, body: 'inbox error' };
      }
      if (context && result.outcome) context.outcome = result.outcome;
      return result;
    });

  const handler = (async (request: Request) => {
    const result = await answer({
      method: request.method,
      url: request.url,
      headers: request.headers,
      declaredLength: lengthOf(request.headers.get('content-length')),
      readBody: () => readWebBody(request.body, limits),
    });
    if (result.status === 413 || result.status === 404) void request.body?.cancel().catch(() => {});
    return new Response(result.body, { status: result.status, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  }) as InboxHandler;

  handler.node = (req, res) => {
    void answer({
      method: req.method,
      url: (req as { url?: string }).url ?? '/',
      headers: req.headers,
      declaredLength: lengthOf(headerValue(req.headers['content-length'])),
      // Text an express.text parser left is stored as its UTF-8 bytes, as it arrived.
      readBody: async () => {
        const body = await readRawNodeBody(req, limits, 'inbox');
        return typeof body === 'string' ? new TextEncoder().encode(body) : body;
      },
    })
      .then((result) => {
        res.statusCode = result.status;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        // An unread body must not be drained by node:http: close the connection after answering.
        if (result.status === 413 || result.status === 408 || result.status === 404 || req.complete === false) res.setHeader('Connection', 'close');
        res.end(result.body);
      })
      .catch((error: unknown) => report(options, error));
  };
  return handler;
}

async function answerDelivery(incoming: Incoming, options: ReceiveOptions, context: { event?: string; deliveryId?: string } | undefined): Promise<Answer> {
  if (incoming.method?.toUpperCase() !== 'POST') return { status: 405, body: 'Method Not Allowed' };
  if (incoming.declaredLength !== undefined && incoming.declaredLength > MAX_BODY_BYTES) {
    return { status: 413, body: 'Payload Too Large', outcome: 'too_large' };
  }
  const verifyOptions = () => ({ toleranceSeconds: options.toleranceSeconds, now: options.clock.now() });
  // Whose it is before anything else: an unknown tenant's request is answered 404 unread.
  let addressee;
  try {
    addressee = await options.secrets.addressee({ url: incoming.url, headers: incoming.headers });
  } catch (error) {
    // The registry could not be read: the service retries on its schedule, as for the store.
    report(options, error);
    return { status: 503, body: 'tenants registry unavailable', outcome: 'unavailable' };
  }
  if (addressee === null) return { status: 404, body: 'unknown tenant', outcome: 'unknown_tenant' };
  try {
    // Headers and timestamp before the body: a request that cannot be a delivery is answered at
    // once, not after waiting for a body it may never send. (The secrets play no part in them.)
    checkDeliveryHeaders(incoming.headers, HEADERS_ONLY, verifyOptions());
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    report(options, error);
    return { status: 400, body: error.reason, outcome: 'rejected' };
  }
  let body: Uint8Array;
  try {
    body = await incoming.readBody();
  } catch (error) {
    if (error instanceof BodyLimitError && error.status === 413) return { status: 413, body: 'Payload Too Large', outcome: 'too_large' };
    report(options, error);
    if (error instanceof BodyLimitError) return { status: 408, body: 'body_timeout', outcome: 'rejected' };
    if (error instanceof ConfigurationError) return { status: 400, body: error.message, outcome: 'rejected' };
    return { status: 400, body: 'body could not be read', outcome: 'rejected' };
  }
  let authenticated;
  try {
    // Authentic is enough to keep it: a body the schema does not accept is stored and marked,
    // never refused (the service would retry a 400 six times and then drop the order). Only the
    // addressee's secrets are tried: a delivery signed for another tenant is refused, stored nowhere.
    authenticated = await authenticateDelivery(body, incoming.headers, addressee, options.secrets, options.clock, verifyOptions);
  } catch (error) {
    if (error instanceof RegistryUnavailable) {
      report(options, error);
      return { status: 503, body: 'tenants registry unavailable', outcome: 'unavailable' };
    }
    if (!(error instanceof WebhookVerificationError)) throw error;
    report(options, error);
    return { status: 400, body: error.reason, outcome: 'rejected' };
  }
  if (authenticated === null) return { status: 404, body: 'unknown tenant', outcome: 'unknown_tenant' };
  const { delivery, secret } = authenticated;
  options.secrets.verified(authenticated.addressee, secret);
  if (context) {
    context.event = delivery.event;
    context.deliveryId = delivery.deliveryId;
  }
  const data = delivery.data as { order_id?: unknown; display_number?: unknown; external_order_id?: unknown } | null;
  const orderId = typeof data === 'object' && data !== null && typeof data.order_id === 'string' ? data.order_id : null;
  const text = (value: unknown) => (orderId !== null && typeof value === 'string' ? value : null);
  const { schemaIssues } = delivery;
  const toDead = schemaIssues !== null && options.invalidPayload === 'dead';
  const receivedAt = options.clock.now();
  try {
    const result = await withinTime(
      options.store.insert({
        ...(addressee.tenant !== undefined && { tenant: addressee.tenant }),
        verifiedBy: secret.id,
        // A copy's original arrived once this secret could deliver: from when the registry stored it
        // (a moment early: the service may deliver before it is stored). A single merchant's secrets
        // have no such time: the store counts from the first delivery each verified.
        ...(secret.createdAt !== null && { pairAfter: pairAfterOf(secret.createdAt, receivedAt) }),
        deliveryId: delivery.deliveryId,
        event: delivery.event,
        orderId,
        ts: delivery.ts,
        payload: new TextDecoder().decode(body),
        known: isKnownEventName(delivery.event),
        receivedAt,
        displayNumber: text(data?.display_number),
        externalOrderId: text(data?.external_order_id),
        ...(schemaIssues !== null && { schemaIssues }),
        ...(toDead && { status: 'dead' as const, lastError: invalidPayloadReason(delivery.event, schemaIssues) }),
      }, { timeoutMs: options.storeTimeoutMs }),
      options.storeTimeoutMs,
      options.clock,
      () => new StoreTimeout(options.storeTimeoutMs),
    );
    if (result === 'stored') options.onStored();
    return { status: 200, body: result === 'stored' ? 'OK' : 'duplicate', outcome: result };
  } catch (error) {
    report(options, error);
    // Never 2xx without the row: the service retries on its schedule (spec 6.4).
    return { status: 503, body: 'inbox store unavailable', outcome: 'unavailable' };
  }
}

/** The header checks use no secret: this one only satisfies their signature. */
const HEADERS_ONLY = 'whsec_headers_only';

/** The `lastError` of an entry sent to `dead` for its shape: what happened and what to do. */
function invalidPayloadReason(event: string, issues: readonly string[]): string {
  const reason = `invalid_payload: the ${event} body does not match the SDK's schema at ${issues.join(', ')}`;
  const advice = '. Kept, not handled: inbox.retry(id) hands it to its handler with ctx.schemaIssues.';
  return reason.length + advice.length <= 300 ? reason + advice : `${reason.slice(0, 300 - advice.length - 1)}…${advice}`;
}

function report(options: ReceiveOptions, error: unknown): void {
  try {
    options.onError?.(error);
  } catch {
    // A failing logger must not change the answer.
  }
}

function lengthOf(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const length = Number(value);
  return Number.isFinite(length) ? length : undefined;
}

function headerValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' || value === undefined ? value : value[0];
}
