/**
 * The receiving side of `integration-sdk/webhooks`: `createWebhookHandler`, as a Fetch handler and
 * a Node `(req, res)` listener, and the delivery rules both share (spec 6.2, 6.3).
 */
import { isKnownEventName, type OrderCreatedEvent, type OrderStatusChangedEvent, type WebhookTestEvent } from '../schemas/events.ts';
import { BodyLimitError, type BodyLimits, checkBodyLimits, checkReadBody, type NodeBodyStream, readNodeBody, readWebBody } from '../bounded-body.ts';
import { epochSeconds, secretList, toleranceOf, type WebhookHeaders, type WebhookSecret } from './signature.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { WebhookVerificationError } from '../errors/webhook-verification-error.ts';
import { checkDeliveryHeaders, type WebhookRawBody } from './verification-steps.ts';
import { verifyWebhookAsync } from './verify-webhook.ts';

/** The events `onEvent` receives: unknown events are answered 2xx without reaching it. */
export type KnownWebhookEvent = OrderCreatedEvent | OrderStatusChangedEvent | WebhookTestEvent;

/** Options of {@link createWebhookHandler}. */
export interface WebhookHandlerOptions {
  /** The endpoint's `whsec_` secret, or several while rotating. */
  secret: WebhookSecret;
  /**
   * Persists the event (and its `delivery_id`, for {@link isDuplicate}). The delivery is answered 2xx
   * only after this resolves (spec 6.3 rule 6); when it throws or rejects the answer is 500 and the
   * service retries. Keep it under the service's 10 s limit: queue heavy work.
   */
  onEvent: (event: KnownWebhookEvent) => unknown;
  /**
   * Whether this `X-Service-Delivery-Id` was already processed: retries reuse it (spec 6.1). Asked
   * after verification and before `onEvent`; a `true` answers 2xx without calling `onEvent`.
   * @default () => false
   */
  isDuplicate?: (deliveryId: string) => boolean | Promise<boolean>;
  /**
   * Told of every error behind a non-2xx answer (a failed verification, a throwing `onEvent`) and of
   * an answer that could not be written, for your logs. Verification errors never hold the secret or
   * the body; errors of your own callbacks are passed through as thrown.
   * @default nothing is logged
   */
  onError?: (error: unknown) => void;
  /** @default 300 */
  toleranceSeconds?: number;
  /** A fixed clock, for tests: a `Date` or epoch milliseconds. @default the current time */
  now?: Date | number;
  /**
   * The largest body accepted, in bytes. A larger one is answered 413 `body_too_large` as soon as
   * it passes the limit (or at once, from its `Content-Length`), without reading the rest. Real
   * deliveries are single orders, far below the default; raise it only if yours are not.
   * @default 1_048_576 (1 MB)
   */
  maxBodyBytes?: number;
  /**
   * How long the body may take to arrive once the headers passed, in milliseconds. A body not
   * complete by then is answered 408 `body_timeout` (the service retries it), so a stalled sender
   * never holds the receiver. Keep it well under the service's 10 s answer limit.
   * @default 5000
   */
  bodyTimeoutMs?: number;
}

/**
 * The parts of a Node request the handler reads: `node:http`'s `IncomingMessage` and Express's
 * request fit. Typed structurally so that this entry needs no Node type definitions.
 */
export interface NodeRequestLike extends NodeBodyStream {
  method?: string | undefined;
  /** Set by Express body parsers: bytes or text from `express.raw()`/`express.text()` are used as is. */
  body?: unknown;
  readableEnded?: boolean;
  /** `false` while the body has not been received in full (`node:http`'s `IncomingMessage`). */
  complete?: boolean;
}

/** The parts of a Node response the handler writes: `node:http`'s `ServerResponse` fits. */
export interface NodeResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(chunk: string): unknown;
}

/** A `(req, res)` listener for `node:http`, Express and other Node servers. */
export type NodeWebhookListener = (req: NodeRequestLike, res: NodeResponseLike) => void;

/** A Fetch handler (Hono, Next.js route handlers, Bun, Deno, Workers) with a Node listener on `.node`. */
export interface WebhookHandler {
  (request: Request): Promise<Response>;
  /** The same handler as a `(req, res)` listener for `node:http` and Express. */
  readonly node: NodeWebhookListener;
}

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

// The #1 webhook pitfall (stripe-node #1294): a JSON parser ran first, and the signed bytes are gone.
const bodyAlreadyRead = (route: string) =>
  `The body was already parsed or read by another middleware: mount express.raw({ type: 'application/json' }) on the ${route} route, ` +
  'registered before any app-wide express.json().';

/** The delivery rules as a Node `(req, res)` listener. */
export function createNodeListener(options: WebhookHandlerOptions): NodeWebhookListener {
  return (req, res) => {
    void answerDelivery({ method: req.method, headers: req.headers, readBody: () => readRawNodeBody(req, options, 'webhook') }, options)
      .then((answer) => write(res, answer, req.complete === false))
      // Writing fails only when something else already answered: there is no one left to tell but onError.
      .catch((error: unknown) => reportError(options, error));
  };
}

/**
 * The raw body of a Node request, for the webhook handler and the inbox: bytes or text a raw or
 * text parser (express.raw, express.text) left in `req.body`, held to `maxBodyBytes`, else the
 * request stream read within the limits. A `req.body` another parser already turned into an object
 * cannot be verified: `ConfigurationError` naming the fix for the `route` ('webhook', 'inbox').
 */
export async function readRawNodeBody(req: NodeRequestLike, limits: BodyLimits, route: string): Promise<string | Uint8Array> {
  const body = req.body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    checkReadBody(body, limits);
    return body;
  }
  const parsed = body !== undefined && body !== null && !isUntouchedEmptyObject(req, body);
  if (parsed || req.readableEnded === true) throw new ConfigurationError(bodyAlreadyRead(route));
  return readNodeBody(req, limits);
}

// body-parser 1.x (Express 4) sets req.body = {} even when it skips a request; the stream is then unread.
function isUntouchedEmptyObject(req: NodeRequestLike, body: unknown): boolean {
  return req.readableEnded === false && typeof body === 'object' && Object.keys(body as object).length === 0;
}

// An answer given before the body ended (a 400 on the headers, a 413) closes the connection:
// kept alive, node:http would read and discard the rest of the body, however large.
function write(res: NodeResponseLike, answer: DeliveryAnswer, bodyUnread: boolean): void {
  res.statusCode = answer.status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  if (bodyUnread) res.setHeader('Connection', 'close');
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  res.end(answer.body);
}

/**
 * A complete receiver: verifies each delivery over its raw bytes (400 with the failure `reason` when
 * it is not genuine), answers 2xx without calling `onEvent` for unknown events and for delivery ids
 * `isDuplicate` has seen, and otherwise answers 2xx only after `onEvent` resolved (500 when it
 * throws, so the service retries). Other methods than POST get 405. It reads the body itself, so
 * it cannot be handed a parsed one.
 *
 * Returns a Fetch handler `(request) => Promise<Response>` (Hono, Next.js route handlers, Bun,
 * Deno, Workers: it uses Web Crypto only) with a Node `(req, res)` listener on `.node` (`node:http`,
 * Express). Throws `ConfigurationError` at once for a missing secret or `onEvent`, or bad limits.
 *
 * The headers and the timestamp window are checked before the body is read; the body is capped at
 * `maxBodyBytes` (1 MB; 413 past it) and must arrive within `bodyTimeoutMs` (5 s; 408 otherwise),
 * so no request can make the receiver read without limit.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from 'integration-sdk/webhooks';
 *
 * const handler = createWebhookHandler({
 *   secret: process.env.WEBHOOK_SECRET!,
 *   isDuplicate: (deliveryId) => db.deliveries.exists(deliveryId),
 *   onEvent: async (event) => {
 *     // Persist the event and its delivery id together, then return: the 2xx follows.
 *     await db.transaction(async (tx) => {
 *       await tx.deliveries.insert(event.delivery_id);
 *       if (event.event === 'order.created') await tx.orders.insert(event.data);
 *     });
 *   },
 * });
 *
 * export const POST = handler;                 // Next.js App Router
 * http.createServer(handler.node).listen(3000); // node:http
 * ```
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  checkHandlerOptions(options);

  const handler = async (request: Request): Promise<Response> =>
    toResponse(
      await answerDelivery(
        { method: request.method, headers: request.headers, readBody: () => readBodyOnce(request, options) },
        options,
      ),
    );
  return Object.assign(handler, { node: createNodeListener(options) });
}

/** Every mistake that would otherwise fail each delivery, refused before the first one arrives. */
function checkHandlerOptions(options: WebhookHandlerOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('createWebhookHandler needs an options object: { secret, onEvent }.');
  }
  secretList(options.secret);
  toleranceOf(options.toleranceSeconds);
  epochSeconds(options.now);
  checkBodyLimits(options);
  if (typeof options.onEvent !== 'function') {
    throw new ConfigurationError('onEvent must be a function that persists the event; without it every delivery would fail.');
  }
  for (const name of ['isDuplicate', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new ConfigurationError(`${name} must be a function when given.`);
  }
}

// A used body can no longer be verified: a setup mistake worth reading in the 500 (spec: never verify nothing).
async function readBodyOnce(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  if (request.bodyUsed) throw new ConfigurationError('The Request body was already read before the webhook handler: pass the Request untouched.');
  return readWebBody(request, limits);
}

function toResponse(answer: DeliveryAnswer): Response {
  return new Response(answer.body, {
    status: answer.status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', ...answer.headers },
  });
}
