import type { OrderCreatedEvent, OrderStatusChangedEvent, WebhookTestEvent } from '../schemas/events.ts';
import type { NodeBodyStream } from '../bounded-body.ts';
import type { WebhookSecret } from './secrets.ts';

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
