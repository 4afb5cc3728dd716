// A webhook receiver on Hono: the handler is a Fetch handler, so it runs unchanged on Node,
// Bun, Deno and Cloudflare Workers (it verifies with Web Crypto).
//
//   npm run build   # once: examples import the package as a user would
//   WEBHOOK_SECRET=whsec_... PORT=3000 node examples/webhooks/hono.ts
import { Hono } from 'hono';
import { createWebhookHandler, type KnownWebhookEvent, type WebhookSecret } from 'integration-sdk/webhooks';

export interface ReceiverOptions {
  secret: WebhookSecret;
  /** Persist the event; the delivery is answered 2xx only once this resolves. */
  onEvent: (event: KnownWebhookEvent) => unknown;
}

export function createApp(options: ReceiverOptions): Hono {
  const app = new Hono();
  // Stand-in for a table with a unique key on delivery_id (retries reuse it).
  const processed = new Set<string>();
  const webhooks = createWebhookHandler({
    secret: options.secret,
    isDuplicate: (deliveryId) => processed.has(deliveryId),
    onEvent: async (event) => {
      await options.onEvent(event);
      processed.add(event.delivery_id);
    },
  });

  // c.req.raw is the untouched Fetch Request: do not read it first (c.req.json() would consume
  // the body, and the signature covers its raw bytes).
  app.post('/webhooks', (c) => webhooks(c.req.raw));
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const { serve } = await import('@hono/node-server');
  const secret = process.env.WEBHOOK_SECRET?.split(',');
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the whsec_ value shown when the endpoint was created.');
  const port = Number(process.env.PORT ?? 3000);
  const app = createApp({ secret, onEvent: (event) => console.log(`received ${event.event} ${event.delivery_id}`) });
  serve({ fetch: app.fetch, port }, () => console.log(`listening on http://localhost:${port}/webhooks`));
}
