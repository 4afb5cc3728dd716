// A webhook receiver on Express 5.
//
//   npm run build   # once: examples import the package as a user would
//   WEBHOOK_SECRET=whsec_... PORT=3000 node examples/webhooks/express.ts
//
// WEBHOOK_SECRET may hold several secrets separated by commas while rotating.
import express from 'express';
import { createWebhookHandler, type KnownWebhookEvent, type WebhookSecret } from 'integration-sdk/webhooks';

export interface ReceiverOptions {
  secret: WebhookSecret;
  /** Persist the event; the delivery is answered 2xx only once this resolves. */
  onEvent: (event: KnownWebhookEvent) => unknown;
}

export function createApp(options: ReceiverOptions): express.Express {
  const app = express();
  // Stand-in for a table with a unique key on delivery_id, written in the same transaction as the
  // event: retries reuse the delivery id, so a delivery seen before is acknowledged and skipped.
  const processed = new Set<string>();
  const webhooks = createWebhookHandler({
    secret: options.secret,
    isDuplicate: (deliveryId) => processed.has(deliveryId),
    onEvent: async (event) => {
      await options.onEvent(event);
      processed.add(event.delivery_id);
    },
  });

  // THE RAW-BODY PITFALL: the signature covers the exact bytes sent. express.json() parses them into
  // an object and they are gone; re-serialising never gives the same bytes back. So this route gets
  // express.raw() (req.body is then a Buffer) and is registered BEFORE any app-wide express.json():
  // once a JSON parser has run, express.raw() skips the request and the handler answers 500 saying so.
  app.post('/webhooks', express.raw({ type: 'application/json' }), webhooks.node);

  // The rest of the app may parse JSON as usual.
  app.use(express.json());
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const secret = process.env.WEBHOOK_SECRET?.split(',');
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the whsec_ value shown when the endpoint was created.');
  const port = Number(process.env.PORT ?? 3000);
  createApp({
    secret,
    // The event name and delivery id only: the order holds personal data.
    onEvent: (event) => console.log(`received ${event.event} ${event.delivery_id}`),
  }).listen(port, () => console.log(`listening on http://localhost:${port}/webhooks`));
}
