// A webhook receiver on Fastify 5, using verifyWebhook directly.
//
//   npm run build   # once: examples import the package as a user would
//   WEBHOOK_SECRET=whsec_... PORT=3000 node examples/webhooks/fastify.ts
import Fastify, { type FastifyInstance } from 'fastify';
import { verifyWebhook, WebhookVerificationError, type KnownWebhookEvent, type WebhookSecret } from 'integration-sdk/webhooks';

export interface ReceiverOptions {
  secret: WebhookSecret;
  /** Persist the event; the delivery is answered 2xx only once this resolves. */
  onEvent: (event: KnownWebhookEvent) => unknown;
}

export function createApp(options: ReceiverOptions): FastifyInstance {
  const app = Fastify();
  // Stand-in for a table with a unique key on delivery_id (retries reuse it).
  const processed = new Set<string>();

  // The signature covers the raw bytes, but Fastify parses JSON bodies by default. A content-type
  // parser registered inside this plugin keeps the bytes for the routes of this plugin only; every
  // other route keeps Fastify's JSON parsing (plugins are encapsulated).
  void app.register(async (webhookScope) => {
    webhookScope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    webhookScope.post('/webhooks', async (request, reply) => {
      let event;
      try {
        event = verifyWebhook(request.body as Uint8Array, request.headers, options.secret);
      } catch (error) {
        if (error instanceof WebhookVerificationError) return reply.code(400).send(error.reason);
        throw error;
      }
      // Events this SDK version does not know are acknowledged and ignored (spec 6).
      if (event.event !== 'order.created' && event.event !== 'order.status_changed' && event.event !== 'webhook.test') {
        return reply.code(200).send('ignored');
      }
      if (processed.has(event.delivery_id)) return reply.code(200).send('duplicate');
      try {
        await options.onEvent(event);
      } catch (error) {
        // 500 makes the service retry; the error is not echoed, it may hold personal data.
        request.log.error({ error: (error as Error).name }, 'webhook processing failed');
        return reply.code(500).send('processing failed; the service will retry');
      }
      processed.add(event.delivery_id);
      return reply.code(200).send('ok');
    });
  });
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const secret = process.env.WEBHOOK_SECRET?.split(',');
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the whsec_ value shown when the endpoint was created.');
  const port = Number(process.env.PORT ?? 3000);
  const app = createApp({ secret, onEvent: (event) => console.log(`received ${event.event} ${event.delivery_id}`) });
  await app.listen({ port, host: '0.0.0.0' });
  console.log(`listening on http://localhost:${port}/webhooks`);
}
