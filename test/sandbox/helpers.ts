import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from 'integration-sdk/sandbox';

export interface ApiAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Calls the sandbox over its socket with `key` (default: the full key) and parses the JSON answer. */
export function api(sandbox: Sandbox, key: string | null = sandbox.apiKey) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> => {
    const response = await fetch(`${sandbox.url}/integration/v1${path}`, {
      method,
      headers: { ...(key === null ? {} : { 'x-api-key': key }), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
  };
}

export { ManualClock } from '../support/manual-clock.ts';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
}

/** A real receiver on 127.0.0.1:0; `answer(n)` gives the status of the n-th request (1-based). */
export async function startReceiver(answer: (n: number) => number | 'hang' = () => 200, extraHeaders: Record<string, string> = {}) {
  const received: ReceivedDelivery[] = [];
  let waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8') });
      waiters = waiters.filter((w) => (received.length >= w.count ? void w.resolve() : true));
      const status = answer(received.length);
      if (status === 'hang') return;
      res.writeHead(status, extraHeaders).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Resolves once `count` requests have arrived. */
    waitForRequests: (count: number) => new Promise<void>((resolve) => {
      if (received.length >= count) resolve();
      else waiters.push({ count, resolve });
    }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Spec 6.2, recomputed independently of the sandbox. */
export function expectedSignature(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}
