// A webhook receiver on plain node:http: the handler reads the raw body from the request stream.
//
//   npm run build   # once: examples import the package as a user would
//   WEBHOOK_SECRET=whsec_... PORT=3000 node examples/webhooks/node-http.ts
import { createServer, type Server } from 'node:http';
import { createWebhookHandler, type KnownWebhookEvent, type WebhookSecret } from 'integration-sdk/webhooks';

export interface ReceiverOptions {
  secret: WebhookSecret;
  /** Persist the event; the delivery is answered 2xx only once this resolves. */
  onEvent: (event: KnownWebhookEvent) => unknown;
}

export function createApp(options: ReceiverOptions): Server {
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

  return createServer((req, res) => {
    if (req.url === '/webhooks') return webhooks.node(req, res);
    res.statusCode = 404;
    res.end();
  });
}

if (process.argv[1] === import.meta.filename) {
  const secret = process.env.WEBHOOK_SECRET?.split(',');
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the whsec_ value shown when the endpoint was created.');
  const port = Number(process.env.PORT ?? 3000);
  createApp({ secret, onEvent: (event) => console.log(`received ${event.event} ${event.delivery_id}`) }).listen(port, () =>
    console.log(`listening on http://localhost:${port}/webhooks`),
  );
}
