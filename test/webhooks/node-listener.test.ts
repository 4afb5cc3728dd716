import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createWebhookHandler, type SignedWebhook, type WebhookHandlerOptions } from 'integration-sdk/webhooks';
import { NOW, ORDER, SECRET, deferred, delivery } from './support/deliveries.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

function send(url: string, { body, headers }: SignedWebhook, method = 'POST'): Promise<Response> {
  return fetch(url, method === 'POST' ? { method, headers: { ...headers }, body } : { method });
}

function handlerWith(options: Partial<WebhookHandlerOptions> = {}) {
  const onEvent = vi.fn<WebhookHandlerOptions['onEvent']>(options.onEvent ?? (() => undefined));
  return { handler: createWebhookHandler({ secret: SECRET, now: NOW, ...options, onEvent }), onEvent };
}

const tampered = (): SignedWebhook => {
  const signed = delivery();
  return { ...signed, body: signed.body.replace('"quantity":1.5', '"quantity":15') };
};

describe('.node on a real node:http server', () => {
  test('a genuine delivery is answered 200 after onEvent resolved; tampered 400; GET 405', async () => {
    const persisted = deferred();
    const { handler, onEvent } = handlerWith({ onEvent: () => persisted.promise });
    const responses: ServerResponse[] = [];
    const url = await listen(
      createServer((req, res) => {
        responses.push(res);
        handler.node(req, res);
      }),
    );

    const answer = send(url, delivery());
    await vi.waitFor(() => expect(onEvent).toHaveBeenCalledOnce());
    expect(responses[0]!.headersSent).toBe(false);
    persisted.resolve();
    expect((await answer).status).toBe(200);
    expect(onEvent.mock.calls[0]![0].data).toEqual(ORDER);

    const rejected = await send(url, tampered());
    expect([rejected.status, await rejected.text()]).toEqual([400, 'signature_mismatch']);
    expect(onEvent).toHaveBeenCalledOnce();

    const get = await send(url, delivery(), 'GET');
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
  });

  test('onEvent throwing is answered 500', async () => {
    const { handler } = handlerWith({ onEvent: () => { throw new Error('disk full'); } });
    expect((await send(await listen(createServer(handler.node)), delivery())).status).toBe(500);
  });
});

describe('.node in Express', () => {
  const app = (mount: (app: express.Express, listener: express.RequestHandler) => void, options: Partial<WebhookHandlerOptions> = {}) => {
    const { handler, onEvent } = handlerWith(options);
    const server = express();
    mount(server, handler.node);
    return { server: createServer(server), onEvent };
  };

  test.each([
    ["express.raw({ type: 'application/json' })", (server: express.Express, listener: express.RequestHandler) => server.post('/webhooks', express.raw({ type: 'application/json' }), listener)],
    ["express.text({ type: 'application/json' })", (server: express.Express, listener: express.RequestHandler) => server.post('/webhooks', express.text({ type: 'application/json' }), listener)],
    ['no body parser', (server: express.Express, listener: express.RequestHandler) => server.post('/webhooks', listener)],
    [
      'express.raw on the route, registered before an app-wide express.json()',
      (server: express.Express, listener: express.RequestHandler) => {
        server.post('/webhooks', express.raw({ type: 'application/json' }), listener);
        server.use(express.json());
      },
    ],
  ])('verifies over the raw bytes with %s', async (_label, mount) => {
    const { server, onEvent } = app(mount);
    const url = await listen(server);
    expect((await send(url, delivery())).status).toBe(200);
    expect((await send(url, tampered())).status).toBe(400);
    expect(onEvent).toHaveBeenCalledOnce();
  });

  test.each([
    ['express.json() on the route', (server: express.Express, listener: express.RequestHandler) => server.post('/webhooks', express.json(), listener)],
    [
      'an app-wide express.json() before express.raw',
      (server: express.Express, listener: express.RequestHandler) => {
        server.use(express.json());
        server.post('/webhooks', express.raw({ type: 'application/json' }), listener);
      },
    ],
  ])('a body parsed as JSON by %s gets a 500 that says to mount express.raw', async (_label, mount) => {
    const onError = vi.fn();
    const { server, onEvent } = app(mount, { onError });
    const response = await send(await listen(server), delivery());
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/already parsed.*express\.raw\(\{ type: 'application\/json' \}\)/);
    expect(onEvent).not.toHaveBeenCalled();
    expect(String(onError.mock.calls[0]![0])).toMatch(/ConfigurationError: The body was already parsed/);
  });
});

describe('.node edge cases', () => {
  test('a method other than POST gets 405 even when a JSON parser ran', async () => {
    const { handler } = handlerWith();
    const server = express();
    server.use(express.json());
    server.all('/webhooks', handler.node);
    const response = await fetch(await listen(createServer(server)), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(405);
  });

  test('a response another middleware already sent is reported to onError, never an unhandled rejection', async () => {
    const onError = vi.fn();
    const { handler } = handlerWith({ onError });
    const reported = new Promise((resolve) => onError.mockImplementation(resolve));
    const url = await listen(
      createServer((req, res) => {
        res.end('answered elsewhere');
        handler.node(req, res);
      }),
    );
    expect(await (await send(url, delivery())).text()).toBe('answered elsewhere');
    expect(String(await reported)).toMatch(/ERR_HTTP_HEADERS_SENT|headers after they are sent/i);
  });
});
