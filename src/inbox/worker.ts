import { systemClock, type Clock } from '../clock.ts';
import { ConfigurationError } from '../errors/index.ts';
import { traceInbox } from '../diagnostics.ts';
import type { Order } from '../schemas/order.ts';
import type { ClaimedEntry, InboxStore } from './types.ts';

/** What a handler gets besides the event. */
export interface InboxHandlerContext {
  /** `X-Service-Delivery-Id` of the entry. */
  deliveryId: string;
  /** 1 on the first run. */
  attempt: number;
  /** Aborted when the worker stops (after its grace period) or the entry's lease is lost. */
  signal: AbortSignal;
  /** The full order of an order event: from the inbox's own `order.created`, else read back with `client.orders.get`. */
  order(): Promise<Order>;
}

/** A handler per event name: `order.created`, `order.status_changed`, or any other name to handle. */
export type InboxHandlers = Record<string, (event: InboxEvent, ctx: InboxHandlerContext) => unknown>;

/** The stored event as delivered: `{ event, delivery_id, ts, data }`. */
export interface InboxEvent {
  event: string;
  delivery_id: string;
  ts: number;
  // biome-ignore lint: the event's own data, typed by the handler's event name
  data: any;
}

/** Options of `inbox.startWorker`. */
export interface StartWorkerOptions {
  handlers: InboxHandlers;
  /** Entries handled at once (of different orders). @default 1 */
  concurrency?: number;
  /** Runs before an entry is dead. @default 10 */
  maxAttempts?: number;
  /** How long a claim holds; extended while the handler runs. @default 60_000 */
  leaseMs?: number;
  /** The wait before attempt `attempt + 1`. @default 1 s doubling to 1 h, with full jitter */
  retryDelayMs?: (attempt: number) => number;
  /** How long an order event waits for its `order.created`. @default 600_000 (10 min) */
  orderWaitMs?: number;
  /** Lets `ctx.order()` read an order back (an `IntegrationClient`). */
  client?: { orders: { get(orderId: string): Promise<Order> } };
  /** Told of every failed run, with the entry's id and attempt (never its payload). */
  onError?: (error: unknown, entry: { deliveryId: string; event: string; attempt: number }) => void;
  /** How often an idle worker looks for new entries. @default 250 */
  pollMs?: number;
  /** On `stop()`, how long handlers in flight may finish before their signal aborts. @default 10_000 */
  stopGraceMs?: number;
  /** Test seams. */
  clock?: Clock;
  random?: () => number;
}

export interface InboxWorker {
  /** Stops claiming, waits for handlers in flight (aborting their signal after the grace period). */
  stop(): Promise<void>;
}

const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 3_600_000;

/** Runs the inbox's entries through `handlers`: at least once, per-order in order, with retries and dead letters. */
export function startInboxWorker(store: InboxStore, options: StartWorkerOptions, wake: { subscribe(listener: () => void): () => void }): InboxWorker {
  if (typeof options !== 'object' || options === null || typeof options.handlers !== 'object' || options.handlers === null) {
    throw new ConfigurationError('startWorker needs handlers: { "order.created": async (event, ctx) => {...}, ... }');
  }
  for (const [name, handler] of Object.entries(options.handlers)) {
    if (typeof handler !== 'function') throw new ConfigurationError(`startWorker: the handler of ${name} must be a function`);
  }
  const concurrency = wholeNumber('concurrency', options.concurrency ?? 1, 1);
  const maxAttempts = wholeNumber('maxAttempts', options.maxAttempts ?? 10, 1);
  const leaseMs = wholeNumber('leaseMs', options.leaseMs ?? 60_000, 100);
  const orderWaitMs = wholeNumber('orderWaitMs', options.orderWaitMs ?? 600_000, 0);
  const pollMs = wholeNumber('pollMs', options.pollMs ?? 250, 1);
  const stopGraceMs = wholeNumber('stopGraceMs', options.stopGraceMs ?? 10_000, 0);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const retryDelayMs = options.retryDelayMs ?? ((attempt: number) => random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1)));
  const workerId = `${globalThis.crypto.randomUUID()}`;

  let running = true;
  const inFlight = new Map<string, { promise: Promise<void>; controller: AbortController }>();
  let cancelSleep: (() => void) | undefined;
  let wakeUp: (() => void) | undefined;
  const unsubscribe = wake.subscribe(() => wakeUp?.());

  const idle = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        cancelSleep?.();
        cancelSleep = undefined;
        wakeUp = undefined;
        resolve();
      };
      wakeUp = done;
      cancelSleep = clock.setTimeout(done, pollMs);
    });

  async function run(entry: ClaimedEntry, controller: AbortController): Promise<void> {
    const handler = options.handlers[entry.event];
    // Keeps the claim while the handler runs; a lost lease aborts the handler's signal.
    const extendEvery = Math.max(50, Math.floor(leaseMs / 3));
    let cancelExtend: (() => void) | undefined;
    const extend = () => {
      cancelExtend = clock.setTimeout(() => {
        void store.extendLease(entry.deliveryId, workerId, clock.now() + leaseMs).then(
          (held) => (held ? extend() : controller.abort(new Error('the lease on this entry was lost'))),
          () => extend(),
        );
      }, extendEvery);
    };
    extend();
    try {
      await traceInbox({ kind: 'handled', event: entry.event, deliveryId: entry.deliveryId, attempt: entry.attempt }, async (trace) => {
        try {
          if (handler) {
            const event = JSON.parse(entry.payload) as InboxEvent;
            await handler(event, { deliveryId: entry.deliveryId, attempt: entry.attempt, signal: controller.signal, order: () => orderOf(event) });
          }
          await store.complete(entry.deliveryId, workerId, clock.now());
          if (trace) trace.outcome = 'done';
        } catch (error) {
          const dead = entry.attempt >= maxAttempts;
          if (trace) trace.outcome = dead ? 'dead' : 'retry';
          try {
            options.onError?.(error, { deliveryId: entry.deliveryId, event: entry.event, attempt: entry.attempt });
          } catch {
            // a failing logger changes nothing
          }
          const delay = Math.max(0, retryDelayMs(entry.attempt));
          await store.fail(entry.deliveryId, workerId, { error: messageOf(error), nextAttemptAt: clock.now() + delay, dead });
        }
      });
    } catch {
      // The store failed to record the outcome: the lease expires and the entry runs again.
    } finally {
      cancelExtend?.();
    }
  }

  async function orderOf(event: InboxEvent): Promise<Order> {
    const orderId = (event.data as { order_id?: unknown } | null)?.order_id;
    if (typeof orderId !== 'string') throw new ConfigurationError(`ctx.order() is for order events; ${event.event} has no data.order_id`);
    if (event.event === 'order.created') return event.data as Order;
    const created = await store.orderCreatedPayload(orderId);
    if (created) return (JSON.parse(created) as InboxEvent).data as Order;
    if (!options.client) throw new ConfigurationError('ctx.order(): the order.created of this order is not in the inbox; pass `client` to startWorker to read it back');
    return options.client.orders.get(orderId);
  }

  const loop = (async () => {
    while (running) {
      const free = concurrency - inFlight.size;
      let claimed: ClaimedEntry[] = [];
      if (free > 0) {
        try {
          claimed = await store.claim({ now: clock.now(), workerId, leaseMs, limit: free, orderWaitMs });
        } catch {
          claimed = []; // the store is down: try again after the poll interval
        }
      }
      for (const entry of claimed) {
        const controller = new AbortController();
        const promise = run(entry, controller).finally(() => {
          inFlight.delete(entry.deliveryId);
          wakeUp?.();
        });
        inFlight.set(entry.deliveryId, { promise, controller });
      }
      if (claimed.length === 0 || inFlight.size >= concurrency) await idle();
    }
  })();

  return {
    async stop() {
      if (!running) return loop;
      running = false;
      unsubscribe();
      wakeUp?.();
      await loop;
      const pending = [...inFlight.values()];
      let cancelGrace: (() => void) | undefined;
      const grace = new Promise<void>((resolve) => {
        cancelGrace = clock.setTimeout(() => {
          for (const { controller } of pending) controller.abort(new Error('the worker is stopping'));
          resolve();
        }, stopGraceMs);
      });
      await Promise.race([Promise.all(pending.map((p) => p.promise)), grace]);
      cancelGrace?.();
      await Promise.all(pending.map((p) => p.promise));
    },
  };
}

function wholeNumber(name: string, value: unknown, min: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < min) throw new ConfigurationError(`startWorker: ${name} must be a whole number ≥ ${min}`);
  return value as number;
}

/** A handler error's message, cut short: stored and listed, so never the payload itself. */
function messageOf(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : 'a non-Error value was thrown';
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
