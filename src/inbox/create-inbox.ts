import { systemClock, type Clock } from '../clock.ts';
import { traceInbox } from '../diagnostics.ts';
import { ConfigurationError, WebhookVerificationError } from '../errors/index.ts';
import { isKnownEventName } from '../schemas/events.ts';
import { BodyLimitError, checkBodyLimits, readNodeBody, readWebBody, type NodeBodyStream } from '../bounded-body.ts';
import type { NodeRequestLike, NodeResponseLike } from '../webhooks/handler-types.ts';
import type { WebhookSecret } from '../webhooks/secrets.ts';
import { checkDeliveryHeaders } from '../webhooks/verification-steps.ts';
import { verifyWebhookAsync } from '../webhooks/verify-webhook-async.ts';
import type { InboxEntry, InboxStats, InboxStatus, InboxStore } from './types.ts';
import { startInboxWorker, type InboxWorker, type StartWorkerOptions } from './worker.ts';

/** Options of `createInbox`. */
export interface InboxOptions {
  /** The endpoint's `whsec_` secret, or several while rotating. */
  secret: WebhookSecret;
  /** Where entries live: `sqliteStore(...)`, `postgresStore(...)` or your own `InboxStore`. */
  store: InboxStore;
  /** @default 300 */
  toleranceSeconds?: number;
  /** How long a done entry keeps its payload (personal data); its delivery id is kept at least 7 days. @default { days: 7 } */
  retention?: { days: number };
  /** A body larger than this is answered 413. @default 1_048_576 */
  maxBodyBytes?: number;
  /** How long the body may take to arrive. @default 5_000 */
  bodyTimeoutMs?: number;
  /** How long a store write may take before the delivery is answered 503 (the service retries). @default 3_000 */
  storeTimeoutMs?: number;
  /** Test seam. */
  clock?: Clock;
}

/** The Fetch handler, with `.node` for `node:http` and Express. */
export interface InboxHandler {
  (request: Request): Promise<Response>;
  node(req: NodeRequestLike, res: NodeResponseLike): void;
}

/** A durable webhook inbox: verify, store, answer; then work the entries in any process sharing the store. */
export interface Inbox {
  handler: InboxHandler;
  startWorker(options: StartWorkerOptions): InboxWorker;
  stats(): Promise<InboxStats>;
  /** Entries without their payloads, oldest first. */
  entries(filter?: { status?: InboxStatus }): AsyncIterable<InboxEntry>;
  /** A dead (or done) entry back to pending; `false` when unknown or its payload was purged. */
  retry(deliveryId: string): Promise<boolean>;
  /** Every dead entry back to pending; how many. */
  retryDead(): Promise<number>;
  /** Deletes entries of `status` received more than `olderThanDays` ago; how many. */
  purge(filter: { status: InboxStatus; olderThanDays: number }): Promise<number>;
  /** Stops every worker started here, then closes the store. */
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;
/** The service retries for about 14 h 35 min: delivery ids are kept a week at least. */
const MIN_ID_DAYS = 7;

interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/**
 * A durable inbox for the service's webhooks: each verified delivery is stored before it is
 * answered 2xx, and workers (in this process or others sharing the store) handle each entry at
 * least once, one event of an order at a time, with retries and dead letters.
 *
 * @example
 * ```ts
 * import { createInbox } from 'integration-sdk/inbox';
 * import { sqliteStore } from 'integration-sdk/inbox/sqlite';
 *
 * const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET!, store: sqliteStore({ path: './integration-inbox.db' }) });
 * // app.post('/webhooks/integration', inbox.handler.node);
 * const worker = inbox.startWorker({
 *   handlers: { 'order.created': async (event) => console.log('order', event.data.display_number) },
 * });
 * await worker.stop();
 * await inbox.close();
 * ```
 */
export function createInbox(options: InboxOptions): Inbox {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('createInbox needs options: { secret, store }');
  const { store } = options;
  if (typeof store !== 'object' || store === null || typeof store.insert !== 'function' || typeof store.claim !== 'function') {
    throw new ConfigurationError('createInbox needs store: sqliteStore({ path }), postgresStore({ ... }) or an InboxStore of your own');
  }
  // The secret and tolerance are checked now, not at the first delivery.
  checkOptionsEarly(options);
  const limits = checkBodyLimits({ maxBodyBytes: options.maxBodyBytes, bodyTimeoutMs: options.bodyTimeoutMs, clock: options.clock });
  const retentionDays = options.retention?.days ?? 7;
  if (typeof retentionDays !== 'number' || !(retentionDays >= 0) || !Number.isFinite(retentionDays)) throw new ConfigurationError('createInbox: retention.days must be a number ≥ 0');
  const storeTimeoutMs = options.storeTimeoutMs ?? 3_000;
  const clock = options.clock ?? systemClock;

  const listeners = new Set<() => void>();
  const wake = {
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const workers = new Set<InboxWorker>();

  async function receive(method: string | undefined, headers: Headers | NodeRequestLike['headers'], readBody: () => Promise<Uint8Array | string>): Promise<Answer> {
    if (method?.toUpperCase() !== 'POST') return { status: 405, body: 'Method Not Allowed', headers: { Allow: 'POST' } };
    return traceInbox({ kind: 'received' }, async (trace) => {
      const answer = (outcome: string, status: number, body: string, extra?: Record<string, string>): Answer => {
        if (trace) trace.outcome = outcome;
        return { status, body, headers: extra };
      };
      let event;
      try {
        checkDeliveryHeaders(headers, options.secret, { toleranceSeconds: options.toleranceSeconds });
        const body = await readBody();
        event = await verifyWebhookAsync(body, headers, options.secret, { toleranceSeconds: options.toleranceSeconds });
        const raw = typeof body === 'string' ? body : new TextDecoder().decode(body);
        if (trace) {
          trace.event = event.event;
          trace.deliveryId = event.delivery_id;
        }
        const orderId = (event.data as { order_id?: unknown } | null)?.order_id;
        const stored = await withTimeout(
          store.insert({
            deliveryId: event.delivery_id,
            event: event.event,
            orderId: typeof orderId === 'string' ? orderId : null,
            ts: event.ts,
            payload: raw,
            known: isKnownEventName(event.event),
            receivedAt: clock.now(),
          }),
          storeTimeoutMs,
          clock,
        );
        if (stored === 'stored') for (const listener of listeners) listener();
        return stored === 'stored' ? answer('stored', 200, 'stored') : answer('duplicate', 200, 'duplicate');
      } catch (error) {
        if (error instanceof WebhookVerificationError) return answer('rejected', 400, error.reason);
        if (error instanceof BodyLimitError) return answer(error.status === 413 ? 'too_large' : 'rejected', error.status, error.status === 413 ? 'Payload Too Large' : 'Request Timeout', { Connection: 'close' });
        if (error instanceof ConfigurationError && event === undefined) return answer('rejected', 500, error.message);
        // Locked, full, down, too slow: never 2xx without the row; the service retries on its schedule.
        return answer('unavailable', 503, 'Service Unavailable', { 'Retry-After': '60' });
      }
    });
  }

  const handler = Object.assign(
    async (request: Request): Promise<Response> => {
      const answer = await receive(request.method, request.headers, () => readWebBody(request, limits));
      return new Response(answer.body, { status: answer.status, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...answer.headers } });
    },
    {
      node(req: NodeRequestLike, res: NodeResponseLike): void {
        const readBody = async (): Promise<Uint8Array | string> => {
          const body = req.body;
          if (typeof body === 'string' || body instanceof Uint8Array) return body;
          return readNodeBody(req as unknown as NodeBodyStream, limits);
        };
        void receive(req.method, req.headers, readBody).then(
          (answer) => {
            // Answering before the body ended: close, or node:http reads and discards the rest.
            if ((req as { complete?: boolean }).complete === false) res.setHeader('Connection', 'close');
            res.statusCode = answer.status;
            res.setHeader('Content-Type', 'text/plain; charset=utf-8');
            for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
            res.end(answer.body);
          },
          () => {
            res.statusCode = 503;
            res.end('Service Unavailable');
          },
        );
      },
    },
  );

  async function applyRetention(): Promise<void> {
    const now = clock.now();
    await store.applyRetention(now - retentionDays * DAY_MS, now - Math.max(retentionDays, MIN_ID_DAYS) * DAY_MS).catch(() => {});
  }

  return {
    handler,
    startWorker(workerOptions) {
      void applyRetention();
      const worker = startInboxWorker(store, workerOptions, wake);
      const tracked: InboxWorker = {
        async stop() {
          workers.delete(tracked);
          await worker.stop();
        },
      };
      workers.add(tracked);
      return tracked;
    },
    stats: () => store.stats(clock.now()),
    async *entries(filter = {}) {
      yield* await store.entries({ status: filter.status });
    },
    retry(deliveryId) {
      if (typeof deliveryId !== 'string' || deliveryId === '') return Promise.reject(new ConfigurationError('inbox.retry needs a delivery id'));
      return store.retry(deliveryId, clock.now());
    },
    retryDead: () => store.retryDead(clock.now()),
    purge(filter) {
      const days = filter?.olderThanDays;
      if (typeof days !== 'number' || !(days >= 0)) return Promise.reject(new ConfigurationError('inbox.purge needs { status, olderThanDays ≥ 0 }'));
      return store.purge(filter.status, clock.now() - days * DAY_MS);
    },
    async close() {
      await Promise.all([...workers].map((worker) => worker.stop()));
      await store.close();
    },
  };
}

function checkOptionsEarly(options: InboxOptions): void {
  try {
    checkDeliveryHeaders({}, options.secret, { toleranceSeconds: options.toleranceSeconds });
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error; // a bad secret or tolerance
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, clock: Clock): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}
