import type { WebhookEvent } from '../schemas/events.ts';
import { nodeCrypto, type NodeCrypto, webHmacSha256 } from './crypto.ts';
import {
  checkBeforeSignature,
  completeAuthentication,
  completeVerification,
  type PendingDelivery,
  type VerifyWebhookOptions,
  type WebhookRawBody,
} from './verification-steps.ts';
import { signedContent, type WebhookHeaders, type WebhookSecret } from './signature.ts';
import type { AuthenticDelivery } from './parse-event.ts';

/**
 * Verifies a delivery and returns its typed event; throws `WebhookVerificationError` (with a
 * `reason`) when it is not genuine. Checks, in order: the signature and timestamp headers exist, the
 * timestamp is an integer within `toleranceSeconds` of now (both directions), the signature has the
 * form `sha256=<64 lowercase hex>` and equals HMAC-SHA256(secret, `<timestamp>.<raw body>`)
 * (constant time; any secret of an array may match). Only then is the body parsed, and its `event`
 * and `delivery_id` must equal the `X-Service-Event` and `X-Service-Delivery-Id` headers.
 *
 * Synchronous, with `node:crypto` (Node, Bun, Deno). On edge runtimes use {@link verifyWebhookAsync}.
 *
 * @param rawBody the body exactly as received: never a parsed and re-serialised object.
 * @param headers a Fetch `Headers` or a Node-style record, names in any case.
 * @param secret the endpoint's `whsec_` secret, or several while rotating.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { verifyWebhook, WebhookVerificationError } from 'integration-sdk/webhooks';
 *
 * app.post('/webhooks', express.raw({ type: 'application/json' }), (req, res) => {
 *   let event;
 *   try {
 *     event = verifyWebhook(req.body, req.headers, process.env.WEBHOOK_SECRET!);
 *   } catch (error) {
 *     if (error instanceof WebhookVerificationError) return res.status(400).send(error.reason);
 *     throw error;
 *   }
 *   if (event.event === 'order.created') console.log(event.data.display_number);
 *   res.sendStatus(200);
 * });
 * ```
 */
export function verifyWebhook(
  rawBody: WebhookRawBody,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const { createHmac } = nodeCrypto('verifyWebhook');
  const delivery = checkBeforeSignature(rawBody, headers, secret, options);
  return completeVerification(delivery, digestsOf(delivery, createHmac));
}

/**
 * The checks of {@link verifyWebhook} up to the signature (a `WebhookVerificationError` when the
 * delivery is not authentic, or its headers disagree with its body), then the body read without
 * refusing a shape the SDK did not expect: the inbox keeps every authentic delivery and marks
 * the ones whose body does not match the schema. Internal: not exported by the webhooks entry.
 */
export function authenticateWebhook(rawBody: WebhookRawBody, headers: WebhookHeaders, secret: WebhookSecret, options: VerifyWebhookOptions = {}): AuthenticDelivery {
  const { createHmac } = nodeCrypto('createInbox');
  const delivery = checkBeforeSignature(rawBody, headers, secret, options);
  return completeAuthentication(delivery, digestsOf(delivery, createHmac));
}

function digestsOf(delivery: PendingDelivery, createHmac: NodeCrypto['createHmac']): Uint8Array[] {
  // Fed in two parts: the signed content `<timestamp>.<raw body>` is never copied into one buffer.
  const prefix = `${delivery.timestamp}.`;
  return delivery.secrets.map((key) => createHmac('sha256', key).update(prefix).update(delivery.body).digest());
}

/**
 * {@link verifyWebhook} with Web Crypto only: the same arguments, checks, order and errors, for
 * runtimes without `node:crypto` (Cloudflare Workers, Vercel Edge, Deno Deploy). Rejects with
 * `WebhookVerificationError` when the delivery is not genuine.
 *
 * @example
 * ```ts
 * import { verifyWebhookAsync, WebhookVerificationError } from 'integration-sdk/webhooks';
 *
 * export default {
 *   async fetch(request: Request, env: { WEBHOOK_SECRET: string }) {
 *     try {
 *       const event = await verifyWebhookAsync(await request.arrayBuffer(), request.headers, env.WEBHOOK_SECRET);
 *       // persist event, then:
 *       return new Response('ok');
 *     } catch (error) {
 *       if (error instanceof WebhookVerificationError) return new Response(error.reason, { status: 400 });
 *       throw error;
 *     }
 *   },
 * };
 * ```
 */
export async function verifyWebhookAsync(
  rawBody: WebhookRawBody,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const delivery = checkBeforeSignature(rawBody, headers, secret, options);
  const content = signedContent(delivery.timestamp, delivery.body);
  const digests = await Promise.all(delivery.secrets.map((key) => webHmacSha256(key, content)));
  return completeVerification(delivery, digests);
}
