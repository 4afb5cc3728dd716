import { answerDelivery, type DeliveryAnswer } from './answer-delivery.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { checkBodyLimits, readWebBody, type BodyLimits } from '../bounded-body.ts';
import { epochSeconds, toleranceOf } from './timestamp.ts';
import type { WebhookHandler, WebhookHandlerOptions } from './handler-types.ts';
import { createNodeListener } from './node-listener.ts';
import { secretList } from './secrets.ts';

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
