// A webhook receiver as a Next.js App Router route handler: app/api/webhooks/route.ts.
//
// Route handlers get a Fetch Request whose body nobody has read, so the signature is checked over
// the raw bytes with no configuration (the Pages Router needed `bodyParser: false`). Do not call
// request.json() before the handler. The handler uses Web Crypto only, so
// `export const runtime = 'edge'` works as well.
//
// Next.js accepts only route exports (GET, POST, runtime, ...) from a route.ts: in an app, move
// createPostHandler to a module of its own (lib/webhooks.ts) and keep only POST here.
import { createWebhookHandler, type KnownWebhookEvent, type WebhookSecret } from 'integration-sdk/webhooks';

export interface ReceiverOptions {
  secret: WebhookSecret;
  /** Persist the event; the delivery is answered 2xx only once this resolves. */
  onEvent: (event: KnownWebhookEvent) => unknown;
}

export function createPostHandler(options: ReceiverOptions): (request: Request) => Promise<Response> {
  // Stand-in for a table with a unique key on delivery_id: a serverless instance forgets this Set,
  // so in production ask the database.
  const processed = new Set<string>();
  return createWebhookHandler({
    secret: options.secret,
    isDuplicate: (deliveryId) => processed.has(deliveryId),
    onEvent: async (event) => {
      await options.onEvent(event);
      processed.add(event.delivery_id);
    },
  });
}

let handler: ((request: Request) => Promise<Response>) | undefined;

export async function POST(request: Request): Promise<Response> {
  // Created on the first delivery rather than at import, so that `next build` runs without the secret.
  handler ??= createPostHandler({
    secret: (process.env.WEBHOOK_SECRET ?? '').split(','),
    onEvent: (event) => console.log(`received ${event.event} ${event.delivery_id}`),
  });
  return handler(request);
}

// Not needed in a Next.js app: lets `node examples/webhooks/nextjs-route.ts` serve POST for a quick try.
if (import.meta.filename !== undefined && globalThis.process?.argv?.[1] === import.meta.filename) {
  const { serve } = await import('@hono/node-server');
  const port = Number(process.env.PORT ?? 3000);
  serve({ fetch: POST, port }, () => console.log(`listening on http://localhost:${port}/ (POST)`));
}
