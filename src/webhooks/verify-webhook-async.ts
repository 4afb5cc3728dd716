import type { WebhookEvent } from '../schemas/events.ts';
import type { VerifyWebhookOptions } from './options.ts';
import type { WebhookRawBody } from './raw-body.ts';
import type { WebhookHeaders } from './read-header.ts';
import type { WebhookSecret } from './secrets.ts';
import { checkBeforeSignature, completeVerification } from './verification-steps.ts';
import { signedContent } from './signature.ts';
import { webHmacSha256 } from './web-hmac.ts';

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
