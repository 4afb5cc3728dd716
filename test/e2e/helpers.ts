import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { IntegrationClient, type Clock, type IntegrationClientOptions } from 'integration-sdk';
import { createSandbox, type Sandbox, type SandboxClock, type SandboxOptions } from 'integration-sdk/sandbox';

/**
 * Every server a test starts is closed after it, newest first, even when the test failed.
 * Importing this module installs the `afterEach`.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

export function onCleanup(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}

/** A real sandbox on a loopback socket, closed after the test. Rate limit off unless asked for. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox({ rate: false, ...options });
  onCleanup(() => sandbox.close());
  return sandbox;
}

/** One attempt as the client's `fetch` saw it. */
export interface Exchange {
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  /** The JSON body sent, parsed (undefined for none). */
  body: unknown;
  /** The answer's status, or 'dropped' when fetch rejected (a lost response). */
  status: number | 'dropped';
  /** The error code of an error envelope, when there was one. */
  code?: string;
  /** The error message of an error envelope, when there was one. */
  message?: string;
  /** When the attempt was sent, by the clock given to `recordingFetch`. */
  at: number;
}

/** Wraps the real fetch to record every attempt the client makes, without changing any of them. */
export function recordingFetch(now: () => number = Date.now): { fetch: typeof globalThis.fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const text = request.body === null ? '' : await request.clone().text();
    const url = new URL(request.url);
    const exchange: Exchange = {
      method: request.method,
      path: url.pathname,
      query: url.search,
      body: text === '' ? undefined : JSON.parse(text),
      status: 'dropped',
      at: now(),
    };
    exchanges.push(exchange);
    const response = await globalThis.fetch(request);
    exchange.status = response.status;
    if (response.status >= 300) {
      try {
        const envelope = (await response.clone().json()) as { error?: { code?: string; message?: string } };
        exchange.code = envelope.error?.code;
        exchange.message = envelope.error?.message;
      } catch {
        // not an envelope
      }
    }
    return response;
  };
  return { fetch, exchanges };
}

/**
 * A client on the sandbox's socket, fast without changing what it does: `random: () => 0` makes
 * every full-jitter backoff 0 ms, and `rateLimit: false` skips client-side pacing (a 429 still
 * pauses the client). Every attempt is recorded in `exchanges`.
 */
export function clientFor(sandbox: Sandbox, options: Partial<IntegrationClientOptions> = {}) {
  const clock = options.clock;
  const recorder = recordingFetch(clock ? () => clock.now() : undefined);
  const client = new IntegrationClient({
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.url,
    random: () => 0,
    rateLimit: false,
    fetch: recorder.fetch,
    ...options,
  });
  return { client, exchanges: recorder.exchanges };
}

/**
 * Time that runs `factor` times faster than the wall clock, for the client and the sandbox at
 * once (both clock shapes: `setTimeout` returns a cancel function). Every delay asked for is kept
 * in `delays`, in virtual milliseconds, so a test can assert what was waited.
 */
export class ScaledClock implements Clock, SandboxClock {
  readonly delays: number[] = [];
  readonly #factor: number;
  // Elapsed time is read from the monotonic clock: a step of the machine's wall clock (time sync on
  // a loaded CI machine), multiplied by the factor, would make a wait look shorter than it was.
  readonly #origin = Date.now();
  readonly #startedAt = performance.now();

  constructor(factor: number) {
    this.#factor = factor;
  }

  now(): number {
    return this.#origin + (performance.now() - this.#startedAt) * this.#factor;
  }

  setTimeout(callback: () => void, ms: number): () => void {
    this.delays.push(ms);
    const timer = globalThis.setTimeout(callback, Math.max(0, ms) / this.#factor);
    return () => globalThis.clearTimeout(timer);
  }
}

export { ManualClock } from '../support/manual-clock.ts';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  /** The status the receiver answered. */
  status: number;
}

/**
 * A webhook receiver on node:http 127.0.0.1:0, closed after the test. `listener` answers (and reads
 * the body itself, as `createWebhookHandler(...).node` does); every request is recorded (headers,
 * answered status) once its answer is sent.
 */
export async function startReceiver(listener: (req: IncomingMessage, res: ServerResponse) => unknown) {
  const received: ReceivedRequest[] = [];
  let waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    res.on('finish', () => {
      received.push({ headers: req.headers, status: res.statusCode });
      waiters = waiters.filter((w) => (received.length >= w.count ? void w.resolve() : true));
    });
    void listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    /** Resolves once `count` requests have been answered. */
    answered: (count: number) =>
      new Promise<void>((resolve) => {
        if (received.length >= count) resolve();
        else waiters.push({ count, resolve });
      }),
  };
}

/** Reads a request's body to its exact bytes. */
export async function rawBodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Awaits `promise` and returns what it rejected with; fails when it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject, but it resolved');
}
