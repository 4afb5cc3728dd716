// Issue 14 item 1: the handler checks headers and the timestamp before reading, caps the body,
// and bounds the time it waits for it, on real sockets.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/errors/index.ts';
import { createWebhookHandler, signWebhook } from '../../src/webhooks/index.ts';

const secret = 'whsec_body_limits_test';
const servers: Server[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(options: Partial<Parameters<typeof createWebhookHandler>[0]> = {}): Promise<{ url: URL; received: () => number; events: unknown[] }> {
  const events: unknown[] = [];
  const handler = createWebhookHandler({ secret, onEvent: (event) => void events.push(event), ...options });
  let received = 0;
  // Bytes the server had read from the socket when its answer was sent (listening to 'data'
  // would itself read the whole body).
  const server = createServer((req, res) => {
    res.on('finish', () => (received = req.socket.bytesRead));
    handler.node(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`), received: () => received, events };
}

/** POSTs `headers` then writes `chunks` of the body as the server lets it, answering with the status. */
function post(url: URL, headers: Record<string, string>, body: { chunk: Buffer; count: number } | 'never-ends'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    if (body === 'never-ends') {
      request.write('{"event":');
      return;
    }
    let written = 0;
    const writeMore = () => {
      while (written < body.count) {
        written++;
        if (!request.write(body.chunk)) {
          request.once('drain', writeMore);
          return;
        }
      }
      request.end();
    };
    writeMore();
  });
}

const signedHeaders = () => {
  const { headers } = signWebhook({ payload: { event: 'webhook.test', data: { webhook_id: 'w1', message: 'hi' } }, secret });
  return { ...headers } as Record<string, string>;
};

describe('createWebhookHandler().node on a real socket', () => {
  it('no signature headers: 400 before reading a 64 MB body', async () => {
    const { url, received } = await listen();
    const answer = await post(url, { 'content-type': 'application/json' }, { chunk: Buffer.alloc(1024 * 1024, 97), count: 64 });
    expect(answer.status).toBe(400);
    expect(received()).toBeLessThan(8 * 1024 * 1024);
  });

  it('a stale timestamp: 400 unread', async () => {
    const { url, received } = await listen();
    const stale = signWebhook({ payload: { event: 'webhook.test', data: {} }, secret, timestamp: Math.floor(Date.now() / 1000) - 3_600 });
    const answer = await post(url, { ...stale.headers }, { chunk: Buffer.alloc(1024 * 1024, 97), count: 32 });
    expect(answer).toMatchObject({ status: 400, body: 'timestamp_out_of_tolerance' });
    expect(received()).toBeLessThan(8 * 1024 * 1024);
  });

  it('signed headers and a body past 1 MB (no Content-Length): 413, the rest not read', async () => {
    const { url, received, events } = await listen();
    const answer = await post(url, { ...signedHeaders(), 'transfer-encoding': 'chunked' }, { chunk: Buffer.alloc(256 * 1024, 32), count: 256 });
    expect(answer.status).toBe(413);
    expect(received()).toBeLessThan(8 * 1024 * 1024);
    expect(events).toEqual([]);
  });

  it('a declared Content-Length past the cap: 413 at once', async () => {
    const { url, received } = await listen({ maxBodyBytes: 1_000 });
    const answer = await post(url, { ...signedHeaders(), 'content-length': String(8 * 1024 * 1024) }, { chunk: Buffer.alloc(8 * 1024, 32), count: 1024 });
    expect(answer.status).toBe(413);
    expect(received()).toBeLessThan(2 * 1024 * 1024);
  });

  it('a body that never ends: 408 after bodyTimeoutMs, well under the service limit', async () => {
    const { url } = await listen({ bodyTimeoutMs: 200 });
    const answer = await post(url, signedHeaders(), 'never-ends');
    expect(answer.status).toBe(408);
  });

  it('a real delivery within the limits is still accepted', async () => {
    const { url, events } = await listen();
    const { body, headers } = signWebhook({ payload: { event: 'webhook.test', data: { webhook_id: 'w1', message: 'hi' } }, secret });
    const answer = await post(url, { ...headers }, { chunk: Buffer.from(body), count: 1 });
    expect(answer.status).toBe(200);
    expect(events).toHaveLength(1);
  });
});

describe('the Fetch handler', () => {
  it('a stream past the cap: 413 having pulled little more than the cap', async () => {
    const handler = createWebhookHandler({ secret, onEvent: () => {}, maxBodyBytes: 10_000 });
    let pulled = 0;
    const body = new ReadableStream({
      pull(controller) {
        pulled += 4_096;
        controller.enqueue(new Uint8Array(4_096));
      },
    });
    const response = await handler(new Request('http://x/hooks', { method: 'POST', headers: signedHeaders(), body, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(10_000 + 4 * 4_096);
  });

  it('a body that never arrives: 408 after bodyTimeoutMs (fake timers)', async () => {
    vi.useFakeTimers();
    const handler = createWebhookHandler({ secret, onEvent: () => {}, bodyTimeoutMs: 5_000, now: Date.now() });
    const body = new ReadableStream({ pull: () => new Promise(() => {}) });
    const pending = handler(new Request('http://x/hooks', { method: 'POST', headers: signedHeaders(), body, duplex: 'half' } as RequestInit));
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await pending).status).toBe(408);
  });

  it('missing headers: 400 without touching the body', async () => {
    const handler = createWebhookHandler({ secret, onEvent: () => {} });
    let pulled = 0;
    const body = new ReadableStream({ pull: (controller) => void ((pulled += 1), controller.enqueue(new Uint8Array(10))) });
    const response = await handler(new Request('http://x/hooks', { method: 'POST', body, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(400);
    expect(pulled).toBeLessThanOrEqual(1);
  });
});

describe('construction', () => {
  it.each([undefined, null, 'x', {}])('onEvent %j: ConfigurationError at once', (onEvent) => {
    expect(() => createWebhookHandler({ secret, onEvent: onEvent as never })).toThrow(ConfigurationError);
  });
  it.each([0, -1, 1.5, Number.NaN])('maxBodyBytes %j: ConfigurationError', (maxBodyBytes) => {
    expect(() => createWebhookHandler({ secret, onEvent: () => {}, maxBodyBytes })).toThrow(ConfigurationError);
  });
});
