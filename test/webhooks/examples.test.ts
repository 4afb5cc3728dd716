import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { signWebhook, type KnownWebhookEvent, type SignedWebhook } from 'integration-sdk/webhooks';
import * as expressExample from '../../examples/webhooks/express.ts';
import * as fastifyExample from '../../examples/webhooks/fastify.ts';
import * as honoExample from '../../examples/webhooks/hono.ts';
import * as nextjsExample from '../../examples/webhooks/nextjs-route.ts';
import * as nodeHttpExample from '../../examples/webhooks/node-http.ts';
import { ORDER_CREATED, SECRET, UNKNOWN_EVENT } from './support/deliveries.ts';

// The examples run on the real clock, as they would in production: deliveries are signed now.
const genuine = (payload = ORDER_CREATED): SignedWebhook => signWebhook({ payload, secret: SECRET });
const tampered = (): SignedWebhook => {
  const signed = genuine();
  return { ...signed, body: signed.body.replace('"total":37.35', '"total":0.01') };
};

type Send = (signed: SignedWebhook) => Promise<Response>;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listenOnNode(server: Server): Promise<Send> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return ({ body, headers }) => fetch(url, { method: 'POST', headers: { ...headers }, body });
}

const RECEIVERS: Array<[string, (onEvent: (event: KnownWebhookEvent) => void) => Promise<Send>]> = [
  ['express', (onEvent) => listenOnNode(createServer(expressExample.createApp({ secret: SECRET, onEvent })))],
  ['node-http', (onEvent) => listenOnNode(nodeHttpExample.createApp({ secret: SECRET, onEvent }))],
  [
    'fastify',
    async (onEvent) => {
      const app = fastifyExample.createApp({ secret: SECRET, onEvent });
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      closers.push(() => app.close());
      return ({ body, headers }) => fetch(`${address}/webhooks`, { method: 'POST', headers: { ...headers }, body });
    },
  ],
  [
    'hono',
    async (onEvent) => {
      const app = honoExample.createApp({ secret: SECRET, onEvent });
      return async ({ body, headers }) => app.request('/webhooks', { method: 'POST', headers: { ...headers }, body });
    },
  ],
  [
    'nextjs-route',
    async (onEvent) => {
      const post = nextjsExample.createPostHandler({ secret: SECRET, onEvent });
      return ({ body, headers }) => post(new Request('https://erp.example/api/webhooks', { method: 'POST', headers: { ...headers }, body }));
    },
  ],
];

describe.each(RECEIVERS)('the %s example', (_name, start) => {
  test('a genuine delivery is answered 2xx and reaches the callback once; a retry is acknowledged', async () => {
    const onEvent = vi.fn<(event: KnownWebhookEvent) => void>();
    const send = await start(onEvent);
    const signed = genuine();
    const response = await send(signed);
    expect(response.status).toBe(200);
    expect(onEvent).toHaveBeenCalledOnce();
    expect(onEvent.mock.calls[0]![0]).toMatchObject({ event: 'order.created', delivery_id: signed.headers['X-Service-Delivery-Id'] });
    expect((await send(signed)).status).toBe(200);
    expect(onEvent).toHaveBeenCalledOnce();
  });

  test('a tampered delivery is answered 400 and never reaches the callback', async () => {
    const onEvent = vi.fn<(event: KnownWebhookEvent) => void>();
    const send = await start(onEvent);
    const response = await send(tampered());
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('signature_mismatch');
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('an unknown event is answered 2xx without reaching the callback', async () => {
    const onEvent = vi.fn<(event: KnownWebhookEvent) => void>();
    const send = await start(onEvent);
    expect((await send(genuine(UNKNOWN_EVENT))).status).toBe(200);
    expect(onEvent).not.toHaveBeenCalled();
  });
});

test('the Express example parses JSON on its other routes', async () => {
  const server = createServer(expressExample.createApp({ secret: SECRET, onEvent: () => undefined }));
  await listenOnNode(server);
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/health`);
  expect(await response.json()).toEqual({ ok: true });
});

test('the Next.js POST export reads WEBHOOK_SECRET on the first delivery', async () => {
  vi.stubEnv('WEBHOOK_SECRET', `whsec_old,${SECRET}`);
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const { body, headers } = genuine();
    const response = await nextjsExample.POST(new Request('https://erp.example/api/webhooks', { method: 'POST', headers: { ...headers }, body }));
    expect(response.status).toBe(200);
    expect(log).toHaveBeenCalledWith(`received order.created ${headers['X-Service-Delivery-Id']}`);
  } finally {
    log.mockRestore();
    vi.unstubAllEnvs();
  }
});
