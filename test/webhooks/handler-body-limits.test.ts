import { createServer, type IncomingMessage } from 'node:http';
import { describe, expect, test, vi } from 'vitest';
import { createWebhookHandler, type WebhookHandlerOptions } from 'integration-sdk/webhooks';
import { NOW, SECRET, delivery } from './support/deliveries.ts';
import { listenForTest, postEndless } from './support/slow-senders.ts';

// The body limits of the handler, on both of its forms. The reader itself is tested in bounded-body.test.ts.

function handlerWith(options: Partial<WebhookHandlerOptions> = {}) {
  const onEvent = vi.fn();
  return { handler: createWebhookHandler({ secret: SECRET, now: NOW, onEvent, ...options }), onEvent };
}

/** A node:http server running `.node`, remembering each request so the test can see what its socket read. */
async function serveNode(options: Partial<WebhookHandlerOptions> = {}) {
  const { handler, onEvent } = handlerWith(options);
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler.node(req, res);
  });
  return { port: await listenForTest(server), requests, onEvent };
}

const signedHeaders = (): Record<string, string> => ({ ...delivery().headers });

describe('.node reads no more body than it must', () => {
  test('missing signature headers are answered 400 before the body is read', async () => {
    const { port, requests } = await serveNode();
    const { answer, client } = postEndless(port, '/webhooks', { 'content-type': 'application/json' }, 4096); // 256 MB offered
    const { status, text, connection } = await answer;
    client.destroy();
    expect([status, text]).toEqual([400, 'missing_header']);
    // Closed rather than kept alive: node:http would otherwise read and discard the whole body.
    expect(connection).toBe('close');
    expect(requests[0]!.socket.bytesRead).toBeLessThan(4 * 1024 * 1024);
  });

  test('a stale timestamp is answered 400 before the body is read', async () => {
    const { port, requests } = await serveNode({ now: NOW.getTime() + 3_600_000 });
    const { answer, client } = postEndless(port, '/webhooks', signedHeaders(), 4096);
    expect((await answer).status).toBe(400);
    client.destroy();
    expect(requests[0]!.socket.bytesRead).toBeLessThan(4 * 1024 * 1024);
  });

  test('a body past maxBodyBytes is answered 413 with what was read staying near the cap', async () => {
    const { port, requests, onEvent } = await serveNode({ maxBodyBytes: 256 * 1024 });
    const { answer, client } = postEndless(port, '/webhooks', signedHeaders(), 4096);
    const { status, text } = await answer;
    client.destroy();
    expect([status, text]).toEqual([413, 'body_too_large']);
    expect(requests[0]!.socket.bytesRead).toBeLessThan(4 * 1024 * 1024);
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('a body that never ends is answered 408 once bodyTimeoutMs has passed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { port, requests } = await serveNode({ bodyTimeoutMs: 5000 });
    const { answer, client } = postEndless(port, '/webhooks', signedHeaders(), 1);
    await vi.waitFor(() => expect(requests).toHaveLength(1), { interval: 5 });
    await vi.waitFor(() => expect(vi.getTimerCount()).toBeGreaterThan(0), { interval: 5 });
    vi.advanceTimersByTime(4999);
    vi.advanceTimersByTime(1);
    const { status, text } = await answer;
    client.destroy();
    expect([status, text]).toEqual([408, 'body_timeout']);
  });
});

describe('the Fetch handler reads no more body than it must', () => {
  function endlessRequest(headers: Record<string, string>, onPull: () => void): Request {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        onPull();
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    return new Request('https://erp.example/webhooks', { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
  }

  test('missing signature headers are answered 400 without pulling the body', async () => {
    let pulls = 0;
    const response = await handlerWith().handler(endlessRequest({ 'content-type': 'application/json' }, () => (pulls += 1)));
    expect([response.status, await response.text()]).toEqual([400, 'missing_header']);
    expect(pulls).toBeLessThanOrEqual(1);
  });

  test('a body past maxBodyBytes is answered 413 and the stream is cancelled', async () => {
    let pulls = 0;
    const response = await handlerWith({ maxBodyBytes: 256 * 1024 }).handler(endlessRequest(signedHeaders(), () => (pulls += 1)));
    expect([response.status, await response.text()]).toEqual([413, 'body_too_large']);
    expect(pulls).toBeLessThan(16);
  });

  test('a body that never arrives is answered 408 after bodyTimeoutMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stalled = new Request('https://erp.example/webhooks', {
      method: 'POST',
      headers: signedHeaders(),
      body: new ReadableStream({ pull: () => new Promise(() => {}) }),
      duplex: 'half',
    } as RequestInit);
    const answer = handlerWith({ bodyTimeoutMs: 2000 }).handler(stalled);
    await vi.waitFor(() => expect(vi.getTimerCount()).toBeGreaterThan(0), { interval: 5 });
    vi.advanceTimersByTime(2000);
    const response = await answer;
    expect([response.status, await response.text()]).toEqual([408, 'body_timeout']);
  });

  test('body limits that would switch themselves off are refused at construction', () => {
    expect(() => handlerWith({ maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
    expect(() => handlerWith({ bodyTimeoutMs: Number.POSITIVE_INFINITY })).toThrow(/bodyTimeoutMs/);
    // Past 2^31 - 1 ms a timer fires at once: every body would time out.
    expect(() => handlerWith({ bodyTimeoutMs: 2 ** 31 })).toThrow(/bodyTimeoutMs/);
    // A clock that would fail every delivery is refused before the first one too.
    expect(() => handlerWith({ now: 'yesterday' as never })).toThrow(/now/);
  });
});

describe('a body a parser already read (express.raw) is held to maxBodyBytes too', () => {
  test.each([
    ['a Buffer', (size: number) => new Uint8Array(size)],
    ['a string', (size: number) => 'x'.repeat(size)],
  ])('%s past the cap is answered 413, without onEvent', async (_name, make) => {
    const { handler, onEvent } = handlerWith({ maxBodyBytes: 1024 });
    const written = { status: 0, body: '' };
    const res = { statusCode: 0, setHeader: () => {}, end: (body: string) => Object.assign(written, { status: res.statusCode, body }) };
    handler.node({ method: 'POST', headers: signedHeaders(), body: make(2048), on: () => {}, removeListener: () => {}, pause: () => {} }, res);
    await vi.waitFor(() => expect(written.status).toBe(413));
    expect(written.body).toBe('body_too_large');
    expect(onEvent).not.toHaveBeenCalled();
  });
});
