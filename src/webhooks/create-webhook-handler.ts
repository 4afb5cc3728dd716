import { ConfigurationError } from '../errors/integration-error.ts';
import { answerDelivery, type DeliveryAnswer } from './answer-delivery.ts';
import { bodyLimitsProblem, readRequestBody } from './bounded-body.ts';
import { toleranceOf } from './clock.ts';
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
 * Express). Throws `ConfigurationError` at once for a missing secret.
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
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('createWebhookHandler needs options: { secret, onEvent }');
  secretList(options.secret);
  toleranceOf(options.toleranceSeconds);
  // Without it every delivery would be answered 500 until the service gives up on it.
  if (typeof options.onEvent !== 'function') throw new ConfigurationError('createWebhookHandler needs onEvent: a function that persists each event (the 2xx waits for it)');
  for (const name of ['isDuplicate', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new ConfigurationError(`createWebhookHandler: ${name} must be a function when given`);
  }
  const limitsProblem = bodyLimitsProblem(options);
  if (limitsProblem) throw new ConfigurationError(`createWebhookHandler: ${limitsProblem}`);

  const handler = async (request: Request): Promise<Response> =>
    toResponse(await answerDelivery({ method: request.method, headers: request.headers, readBody: (limits) => readRequestBody(request, limits) }, options));
  return Object.assign(handler, { node: createNodeListener(options) });
}

function toResponse(answer: DeliveryAnswer): Response {
  return new Response(answer.body, {
    status: answer.status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', ...answer.headers },
  });
}
