import { createServer, request, type IncomingMessage } from 'node:http';
import { describe, expect, test, vi } from 'vitest';
import { BodyLimitError, readNodeBody, readWebBody } from '../src/bounded-body.ts';
import { listenForTest, postEndless } from './webhooks/support/slow-senders.ts';

/** A server handing each request to `read`, resolving with the outcome and the bytes its socket took in. */
async function serve(read: (req: IncomingMessage) => Promise<Uint8Array>) {
  const outcomes: Promise<{ result: unknown; bytesRead: number }>[] = [];
  const server = createServer((req, res) => {
    outcomes.push(
      read(req).then(
        (body) => ({ result: body.byteLength, bytesRead: req.socket.bytesRead }),
        (error: unknown) => ({ result: error, bytesRead: req.socket.bytesRead }),
      ).finally(() => res.writeHead(200, { connection: 'close' }).end()),
    );
  });
  return { port: await listenForTest(server), outcome: async () =>
      vi.waitFor(() => {
        const first = outcomes[0];
        if (!first) throw new Error('no request yet');
        return first;
      }) };
}

describe('readNodeBody on a real socket', () => {
  test('a body past maxBodyBytes is refused with 413 and the rest is never read', async () => {
    const cap = 64 * 1024;
    const { port, outcome } = await serve((req) => readNodeBody(req, { maxBodyBytes: cap }));
    const client = postEndless(port, '/', {}, 256).client; // 16 MB offered
    const { result, bytesRead } = await outcome();
    client.destroy();
    expect(result).toBeInstanceOf(BodyLimitError);
    expect((result as BodyLimitError).status).toBe(413);
    expect(bytesRead).toBeLessThan(2 * 1024 * 1024);
  });

  test('a Content-Length above the cap is refused before reading a byte of the body', async () => {
    const { port, outcome } = await serve((req) => readNodeBody(req, { maxBodyBytes: 1024 }));
    const client = postEndless(port, '/', { 'content-length': 10_000_000 }, 1).client;
    const { result } = await outcome();
    client.destroy();
    expect((result as BodyLimitError).status).toBe(413);
  });

  test('a body that never ends is refused with 408 when bodyTimeoutMs passes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { port, outcome } = await serve((req) => readNodeBody(req, { bodyTimeoutMs: 5000 }));
    const client = postEndless(port, '/', {}, 1).client;
    await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1), { interval: 5 });
    vi.advanceTimersByTime(5000);
    const { result } = await outcome();
    client.destroy();
    expect((result as BodyLimitError).status).toBe(408);
  });

  test('a body within the cap is read whole and the timer is cancelled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { port, outcome } = await serve((req) => readNodeBody(req, { maxBodyBytes: 1000 }));
    const client = request({ port, host: '127.0.0.1', method: 'POST', path: '/' });
    client.on('error', () => {});
    client.end(Buffer.alloc(1000));
    expect((await outcome()).result).toBe(1000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('readWebBody', () => {
  function endless(onPull: () => void, chunkBytes = 16 * 1024) {
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        onPull();
        controller.enqueue(new Uint8Array(chunkBytes));
      },
    });
  }

  test('an endless stream is cancelled just past the cap with 413', async () => {
    let pulls = 0;
    const error = await readWebBody(endless(() => (pulls += 1)), { maxBodyBytes: 64 * 1024 }).catch((e: unknown) => e);
    expect((error as BodyLimitError).status).toBe(413);
    expect(pulls).toBeLessThan(10);
  });

  test('a stream that never delivers is refused with 408 after bodyTimeoutMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let cancelled = false;
    const stalled = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}), cancel: () => void (cancelled = true) });
    const read = readWebBody(stalled).catch((e: unknown) => e);
    vi.advanceTimersByTime(4999);
    expect(cancelled).toBe(false);
    vi.advanceTimersByTime(1);
    expect(((await read) as BodyLimitError).status).toBe(408);
    expect(cancelled).toBe(true);
  });

  test("a Request's declared Content-Length above the cap is refused before reading", async () => {
    let pulls = 0;
    const req = new Request('http://x.invalid/', { method: 'POST', body: endless(() => (pulls += 1)), duplex: 'half', headers: { 'content-length': '5000000' } } as RequestInit);
    const error = await readWebBody(req, { maxBodyBytes: 1024 }).catch((e: unknown) => e);
    expect((error as BodyLimitError).status).toBe(413);
    expect(pulls).toBeLessThanOrEqual(1);
  });

  test('limits that would switch themselves off are a ConfigurationError', async () => {
    await expect(readWebBody(null, { maxBodyBytes: Number.NaN })).rejects.toMatchObject({ name: 'ConfigurationError' });
    await expect(readWebBody(null, { bodyTimeoutMs: 0 })).rejects.toMatchObject({ name: 'ConfigurationError' });
  });
});
