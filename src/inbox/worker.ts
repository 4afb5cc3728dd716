import type { IntegrationClient } from '../client.ts';
import type { Clock } from '../clock.ts';
import { traceInbox } from '../diagnostics.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import type { KnownEventName, WebhookEvent } from '../schemas/events.ts';
import type { Order } from '../schemas/order.ts';
import { errorText } from './error-text.ts';
import { HandlerTimeoutError, withinTime } from './timeouts.ts';
import type { InboxEntry, InboxEntryWithPayload, InboxStore } from './store.ts';

/** What a handler gets besides the event. */
export interface InboxHandlerContext {
  /** `X-Service-Delivery-Id` of the entry. */
  deliveryId: string;
  /** The tenant (merchant) it was received for, in an inbox given `tenants`; `null` in a single-merchant inbox. */
  tenant: string | null;
  /**
   * That tenant's `IntegrationClient` (`tenants.client(tenant)`: its key, its budget), in an inbox
   * given `tenants`; else the `client` given to `startWorker`, if any.
   */
  client: IntegrationClient | undefined;
  /** 1 on the first run, 2 on the next, ... */
  attempt: number;
  /** Aborted on `stop()` after its grace period, when the worker lost the entry's lease, and after `handlerTimeoutMs`. */
  signal: AbortSignal;
  /**
   * Where the event's body differs from the SDK's schema (paths such as `data.customer.email`),
   * or `null` when it matches. Only then does `event` have the shape its type says; an entry with
   * issues reaches a handler with `createInbox({ invalidPayload: 'handler' })`, or after `retry`.
   */
  schemaIssues: readonly string[] | null;
  /**
   * The full order of an order event: from the inbox's own `order.created` entry when it has one,
   * else read back with `client.orders.get(order_id)` (spec 6.4).
   */
  order(): Promise<Order>;
}

/** A handler of one event name. Resolving marks the entry `done`; throwing schedules a retry. */
export type InboxEventHandler<E = WebhookEvent> = (event: E, ctx: InboxHandlerContext) => Promise<unknown> | unknown;

/**
 * Handlers by event name: the known events typed, any other name (a planned event) with the event's
 * `data` as `unknown`.
 */
export type InboxEventHandlers = { [Name in KnownEventName]?: InboxEventHandler<Extract<WebhookEvent, { event: Name }>> } & {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each known name narrows its own event
  [name: string]: InboxEventHandler<any> | undefined;
};

/** The order reader `ctx.order()` falls back to: an `IntegrationClient` fits. */
export interface OrderReader {
  orders: { get(orderId: string): Promise<Order> };
}

/** Options of `inbox.startWorker`. */
export interface StartWorkerOptions {
  /** A handler per event name; an event without one is marked `done` (not an error). */
  handlers: InboxEventHandlers;
  /** Handlers running at once (different orders only). @default 1 */
  concurrency?: number;
  /** Runs before an entry is `dead`. @default 10 */
  maxAttempts?: number;
  /** How long a claim holds before another worker may take the entry; extended while the handler runs. @default 60000 */
  leaseMs?: number;
  /**
   * The wait before run `attempt + 1`, given the run that failed (1, 2, ...).
   * @default 1 s doubling up to 1 h, with ±20 % jitter
   */
  retryDelayMs?: (attempt: number) => number;
  /**
   * How long one run of a handler may take, in ms. A handler that has not settled by then has its
   * `ctx.signal` aborted and the run counts as failed (retried with backoff, `dead` after
   * `maxAttempts`), so that a handler that never settles cannot hold back its order forever.
   * `Infinity` turns the limit off. @default 300000 (5 minutes)
   */
  handlerTimeoutMs?: number;
  /** How long an `order.status_changed` waits for its order's `order.created`. @default 600000 */
  orderWaitMs?: number;
  /** How often to look for due entries when nothing woke the worker, in ms (≤ 250 for SQLite). @default 250 */
  pollMs?: number;
  /** Lets `ctx.order()` read an order the inbox does not hold. */
  client?: OrderReader;
  /** Told about each handler error and store error (the entry, never its payload). */
  onError?: (error: unknown, entry: InboxEntry | undefined) => void;
}

/** A running worker. */
export interface InboxWorker {
  /**
   * Stops claiming, waits for the handlers in flight, and resolves. After `graceMs` (default 30 s)
   * their `ctx.signal` aborts; an entry whose handler did not finish stays leased until its lease
   * expires and runs again (nothing is marked done half-way).
   */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export interface WorkerDeps {
  store: InboxStore;
  clock: Clock;
  random: () => number;
  ready: () => Promise<void>;
  /** Registers a wake-up for deliveries stored by this process; returns the unregister function. */
  onLocalStored: (listener: () => void) => () => void;
  /** Runs the retention purge when due. */
  retention: () => Promise<void>;
  /** A tenant's client (an inbox given `tenants`). */
  clientOf?: (tenant: string) => IntegrationClient;
}

const HOUR = 3_600_000;
const DEFAULT_HANDLER_TIMEOUT_MS = 300_000;
/** After `stop()` aborts the signals, how long it still waits for handlers to settle. */
const ABANDON_AFTER_ABORT_MS = 1000;

/** 1 s doubling to 1 h, ±20 % jitter from the injected random source. */
export function defaultRetryDelayMs(attempt: number, random: () => number): number {
  const base = Math.min(1000 * 2 ** Math.max(0, attempt - 1), HOUR);
  return Math.round(base * (0.8 + 0.4 * random()));
}

let workerCount = 0;

export function startWorker(deps: WorkerDeps, options: StartWorkerOptions): InboxWorker {
  const handlers = options?.handlers;
  if (typeof handlers !== 'object' || handlers === null) throw new ConfigurationError('startWorker needs { handlers }: a handler per event name.');
  // A handler that is not a function would otherwise fail each of its entries until they are dead.
  for (const [name, handler] of Object.entries(handlers)) {
    if (handler !== undefined && typeof handler !== 'function') throw new ConfigurationError(`startWorker: handlers['${name}'] must be a function.`);
  }
  for (const name of ['retryDelayMs', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new ConfigurationError(`startWorker: ${name} must be a function when given.`);
  }
  if (options.client !== undefined && typeof options.client?.orders?.get !== 'function') {
    throw new ConfigurationError('startWorker: client must be an IntegrationClient (anything with orders.get(orderId)).');
  }
  const concurrency = whole(options.concurrency ?? 1, 'concurrency');
  const maxAttempts = whole(options.maxAttempts ?? 10, 'maxAttempts');
  const leaseMs = positive(options.leaseMs ?? 60_000, 'leaseMs');
  const orderWaitMs = nonNegative(options.orderWaitMs ?? 600_000, 'orderWaitMs');
  const pollMs = positive(options.pollMs ?? 250, 'pollMs');
  const handlerTimeoutMs = options.handlerTimeoutMs === Infinity ? Infinity : positive(options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS, 'handlerTimeoutMs');
  const retryDelayMs = options.retryDelayMs ?? ((attempt: number) => defaultRetryDelayMs(attempt, deps.random));
  const { store, clock } = deps;
  const workerId = `${process.pid}-${++workerCount}-${Math.floor(deps.random() * 1e9).toString(36)}`;

  const running = new Set<Promise<void>>();
  const controllers = new Set<AbortController>();
  let stopping = false;
  let abandoned = false;
  let wake: (() => void) | undefined;
  const signalWake = () => wake?.();
  const unsubscribeLocal = deps.onLocalStored(signalWake);
  let unsubscribeStore: (() => void) | undefined;

  const report = (error: unknown, entry?: InboxEntry) => {
    try {
      options.onError?.(error, entry && withoutPayload(entry));
    } catch {
      // A failing logger must not stop the worker.
    }
  };

  // A sign of life for the dashboard ("is any worker alive, did one take work lately"), written at
  // most every 10 s rather than at each poll.
  let seenAt = -Infinity;
  let claimedAt = -Infinity;
  async function heartbeat(claimed: boolean): Promise<void> {
    const now = clock.now();
    if (!store.heartbeat || (now - seenAt < 10_000 && (!claimed || now - claimedAt < 10_000))) return;
    seenAt = now;
    if (claimed) claimedAt = now;
    await store.heartbeat({ workerId, now, claimed }).catch((error: unknown) => {
      // A beat still in flight as the inbox closes its store is not worth an error.
      if (!stopping) report(error);
    });
  }

  let afterTenant: string | null = null;
  async function loop(): Promise<void> {
    let subscribed = false;
    while (!stopping) {
      const free = concurrency - running.size;
      let claimed: InboxEntryWithPayload[] = [];
      let reached = true;
      if (free > 0) {
        try {
          // Inside the loop: a store that is down as the worker starts is tried again at each poll.
          await deps.ready();
          if (!subscribed) {
            subscribed = true;
            unsubscribeStore = await store.subscribe?.(signalWake);
          }
          await deps.retention();
          // The next claim starts after the tenant this one looked at last (else served last): tenants
          // take turns, also when a claim stops its walk early (docs/inbox.md, "Fair claiming").
          let walkedTo: string | undefined;
          claimed = await store.claim({ workerId, now: clock.now(), leaseMs, limit: free, orderWaitMs, afterTenant, walkedTo: (tenant) => (walkedTo = tenant) });
          if (walkedTo !== undefined) afterTenant = walkedTo;
          else if (claimed.length > 0) afterTenant = claimed.at(-1)!.tenant ?? '';
        } catch (error) {
          reached = false;
          report(error);
        }
      }
      // Not awaited: a wake-up signalled while the loop is not waiting would be lost.
      if (reached) void heartbeat(claimed.length > 0);
      for (const entry of claimed) {
        const run = runEntry(entry).finally(() => {
          running.delete(run);
          signalWake();
        });
        running.add(run);
      }
      // A full batch may mean more is due: claim again at once, unless every slot is busy.
      if (claimed.length > 0 && claimed.length === free && running.size < concurrency) continue;
      await new Promise<void>((resolve) => {
        const cancel = clock.setTimeout(() => done(), pollMs);
        function done() {
          cancel();
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  }

  async function runEntry(entry: InboxEntryWithPayload): Promise<void> {
    const attempt = entry.attempts;
    const controller = new AbortController();
    controllers.add(controller);
    let cancelExtend = () => {};
    const extend = () => {
      if (abandoned) return;
      cancelExtend = clock.setTimeout(() => {
        store.extendLease(entry.id, workerId, clock.now() + leaseMs, tenantOf(entry)).then(
          (held) => {
            if (held) extend();
            else controller.abort(new Error('The lease on this inbox entry was lost.'));
          },
          (error: unknown) => {
            report(error, entry);
            extend();
          },
        );
      }, Math.max(1, Math.floor(leaseMs / 3)));
    };
    try {
      await traceInbox({ kind: 'handled', event: entry.event, deliveryId: entry.id, attempt }, async (context) => {
        const outcome = await handle(entry, attempt, controller, extend);
        if (context) context.outcome = outcome;
      });
    } catch (error) {
      report(error, entry);
    } finally {
      cancelExtend();
      controllers.delete(controller);
    }
  }

  async function handle(entry: InboxEntryWithPayload, attempt: number, controller: AbortController, extend: () => void): Promise<'done' | 'retry' | 'dead'> {
    const { signal } = controller;
    const handler = Object.hasOwn(handlers, entry.event) ? handlers[entry.event] : undefined;
    if (!handler || entry.payload === null) {
      await store.complete(entry.id, workerId, clock.now(), tenantOf(entry));
      return 'done';
    }
    if (attempt > maxAttempts) {
      // The runs so far all ended with their worker gone (killed while running): give up the same way.
      await store.fail(entry.id, { workerId, tenant: tenantOf(entry), error: 'Its worker stopped while running it, too many times.', now: clock.now(), nextAttemptAt: null });
      return 'dead';
    }
    let event: WebhookEvent;
    try {
      event = JSON.parse(entry.payload) as WebhookEvent;
    } catch {
      // Nothing a handler could be given, however often it is tried.
      const error = 'invalid_payload: the body is not JSON, so no handler can run it; read it with inbox.entry(id).';
      await store.fail(entry.id, { workerId, tenant: tenantOf(entry), error, now: clock.now(), nextAttemptAt: null });
      return 'dead';
    }
    extend();
    try {
      const client = clientFor(entry);
      const ctx: InboxHandlerContext = {
        deliveryId: entry.id,
        tenant: entry.tenant ?? null,
        client: client as IntegrationClient | undefined,
        attempt,
        signal,
        schemaIssues: entry.schemaIssues ?? null,
        order: () => orderOf(entry, event, client),
      };
      await withinTime(Promise.resolve().then(() => handler(event, ctx)), handlerTimeoutMs, clock, () => {
        const error = new HandlerTimeoutError(handlerTimeoutMs);
        controller.abort(error);
        return error;
      });
    } catch (error) {
      report(error, entry);
      // The lease is gone: another worker has it now.
      if (signal.aborted && !stopping && !(error instanceof HandlerTimeoutError)) return 'retry';
      const dead = attempt >= maxAttempts;
      const now = clock.now();
      const held = await store.fail(entry.id, {
        workerId,
        tenant: tenantOf(entry),
        error: errorText(error, entry.payload),
        now,
        nextAttemptAt: dead ? null : now + Math.max(0, retryDelayMs(attempt)),
      });
      return held && dead ? 'dead' : 'retry';
    }
    await store.complete(entry.id, workerId, clock.now(), tenantOf(entry));
    return 'done';
  }

  /** The tenant's client (an inbox of many merchants), else the one given to startWorker. */
  function clientFor(entry: InboxEntry): OrderReader | undefined {
    if (deps.clientOf && entry.tenant) return deps.clientOf(entry.tenant);
    return options.client;
  }

  async function orderOf(entry: InboxEntry, event: WebhookEvent, client: OrderReader | undefined): Promise<Order> {
    if (event.event === 'order.created') return event.data;
    const orderId = entry.orderId;
    if (orderId === null) throw new ConfigurationError(`ctx.order() is only for order events, not ${entry.event}.`);
    const payload = await store.orderCreatedPayload(orderId, tenantOf(entry));
    if (payload !== null) return (JSON.parse(payload) as { data: Order }).data;
    if (!client) {
      throw new ConfigurationError('The inbox holds no order.created for this order: pass { client } to startWorker so that ctx.order() can read it.');
    }
    return client.orders.get(orderId);
  }

  const looping = loop().catch((error: unknown) => report(error));

  return {
    async stop({ graceMs = 30_000 } = {}) {
      stopping = true;
      wake?.();
      await looping;
      const settled = Promise.allSettled([...running]);
      await new Promise<void>((resolve) => {
        let cancelAbandon = () => {};
        const abort = () => {
          for (const controller of controllers) controller.abort(new Error('The inbox worker is stopping.'));
          // A handler that ignores its signal is left behind: its lease expires and another worker runs the entry.
          cancelAbandon = clock.setTimeout(finish, ABANDON_AFTER_ABORT_MS);
        };
        const cancelGrace = graceMs <= 0 ? (abort(), () => {}) : clock.setTimeout(abort, graceMs);
        function finish() {
          cancelGrace();
          cancelAbandon();
          resolve();
        }
        void settled.then(finish);
      });
      abandoned = true;
      unsubscribeLocal();
      unsubscribeStore?.();
    },
  };
}

/** The tenant an entry's store calls name: `''` for a single-merchant inbox's. */
const tenantOf = (entry: InboxEntry): string => entry.tenant ?? '';

/** The entry as `onError` sees it: the payload (personal data) stays out of logs. */
function withoutPayload(entry: InboxEntry): InboxEntry {
  const { payload: _payload, ...rest } = entry as InboxEntryWithPayload;
  return rest;
}

// Counts: a fraction would reach the store's LIMIT, or make the last attempt never the last.
function whole(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new ConfigurationError(`startWorker: ${name} must be a whole number >= 1.`);
  return value;
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new ConfigurationError(`startWorker: ${name} must be a positive number.`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new ConfigurationError(`startWorker: ${name} must be zero or more.`);
  return value;
}
