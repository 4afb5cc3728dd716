/**
 * What the SDK publishes on Node's `diagnostics_channel` (as `TracingChannel`s, like undici and
 * `node:http`), so that a tracer can subscribe without the SDK depending on one
 * (`integration-sdk/otel` is such a subscriber). Zero cost when nobody listens: the contexts are
 * built only when a channel has subscribers.
 *
 * Nothing on a channel ever holds the API key, a webhook secret, a body, a query value, a phone
 * number or any other personal data: routes are templates (`/orders/{id}`), results are counts.
 *
 * Loaded through `process.getBuiltinModule`, never a static import: on a runtime without
 * `diagnostics_channel` (or without `process`) the SDK publishes nothing and still works.
 *
 * @example
 * ```ts
 * import diagnostics from 'node:diagnostics_channel';
 * diagnostics.tracingChannel('integration-sdk:attempt').subscribe({
 *   start: (ctx) => console.log('attempt', ctx.method, ctx.route, ctx.attempt),
 *   asyncEnd: (ctx) => console.log('status', ctx.status),
 *   error: (ctx) => console.log('failed', ctx.error),
 *   end() {}, asyncStart() {},
 * });
 * ```
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { TracingChannel } from 'node:diagnostics_channel';

/** Counts of a bulk call's or batch's outcome; never ids or values. */
export interface ResultCounts {
  [count: string]: number;
}

/** `integration-sdk:call`: one per SDK method call (`catalog.upsertProducts`, `orders.get`, ...). */
export interface CallContext {
  /** The method as users call it: `catalog.upsertProducts`, `orders.get`, `loyalty.credit`, `request`. */
  operation: string;
  /** Bulk calls: how many batches (requests) the call was split into, once known. */
  batches?: number;
  /** Bulk calls: the summary counts (`{ created, updated, errors }`); other calls leave it unset. */
  result?: ResultCounts;
  /** The error the call rejected with (already scrubbed of the key). */
  error?: unknown;
  /** The SDK call this one runs inside (a sync run's `health` and bulk writes), if any. */
  parent?: CallContext;
}

/** `integration-sdk:batch`: one per batch request of a bulk call, inside its call. */
export interface BatchContext {
  operation: string;
  /** The call this batch belongs to. */
  call: CallContext;
  /** 0-based position of the batch in the call. */
  index: number;
  /** Items sent in the batch. */
  items: number;
  /** Per-item outcome counts of the batch, once answered. */
  result?: ResultCounts;
  error?: unknown;
}

/** `integration-sdk:attempt`: one per HTTP attempt. */
export interface AttemptContext {
  /** `GET`, `POST`, ... */
  method: string;
  /** The path template under `/integration/v1`: `/orders/{id}`, never an id or a query value. */
  route: string;
  /** Host (and port, when not the default) of the service: OpenTelemetry's `server.address`. */
  serverAddress: string;
  /** 1 for the first attempt of a call, 2 for its first retry, ... */
  attempt: number;
  /** How long this attempt waited on the rate limit before it was sent, in ms: the client's limiter, plus a 429's Retry-After pause before a retry. */
  rateLimitWaitMs?: number;
  /** The HTTP status, when an answer came. */
  status?: number;
  /** Why the attempt failed: a connection error, a time-out, or the mapped error of a non-2xx answer. */
  error?: unknown;
  /** The call, and for bulk calls the batch, this attempt belongs to (when their channels have subscribers). */
  call?: CallContext;
  batch?: BatchContext;
}

/** `integration-sdk:inbox`: one per webhook delivery received, and one per event handled by a worker. */
export interface InboxContext {
  /** `received`: the inbox's HTTP handler answered a delivery; `handled`: a worker ran the event's handler. */
  kind: 'received' | 'handled';
  /** The event name, e.g. `order.created`. */
  event?: string;
  /** `X-Delivery-Id`. */
  deliveryId?: string;
  /** For `handled`: 1 for the first try of the handler, 2 for the next, ... */
  attempt?: number;
  /**
   * `received`: `stored`, `duplicate`, `rejected` (forged or stale), `too_large`, `unavailable`.
   * `handled`: `done`, `retry` (will be tried again), `dead` (gave up), `waiting` (an earlier event of the same order first).
   */
  outcome?: string;
  error?: unknown;
}

export const CHANNEL_NAMES = {
  call: 'integration-sdk:call',
  batch: 'integration-sdk:batch',
  attempt: 'integration-sdk:attempt',
  inbox: 'integration-sdk:inbox',
} as const;

type DiagnosticsModule = typeof import('node:diagnostics_channel');
type AsyncHooksModule = typeof import('node:async_hooks');

function builtin<T>(id: string): T | undefined {
  try {
    const getBuiltinModule = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
    return getBuiltinModule?.(id) as T | undefined;
  } catch {
    return undefined;
  }
}

const diagnostics = builtin<DiagnosticsModule>('node:diagnostics_channel');
const asyncHooks = builtin<AsyncHooksModule>('node:async_hooks');

function channel<C extends object>(name: string): TracingChannel<unknown, C> | undefined {
  return diagnostics?.tracingChannel<unknown, C>(name);
}

const channels = {
  call: channel<CallContext>(CHANNEL_NAMES.call),
  batch: channel<BatchContext>(CHANNEL_NAMES.batch),
  attempt: channel<AttemptContext>(CHANNEL_NAMES.attempt),
  inbox: channel<InboxContext>(CHANNEL_NAMES.inbox),
};

/** The call and batch an attempt runs under, so a tracer can parent its span. */
const current: AsyncLocalStorage<{ call?: CallContext; batch?: BatchContext }> | undefined =
  asyncHooks ? new asyncHooks.AsyncLocalStorage() : undefined;

/**
 * Runs `fn` as the traced operation of `channel`: publishes start/end/asyncStart/asyncEnd, or
 * error with `context.error`. `summarize` turns the resolved value into what the context may hold
 * (counts, or nothing): the value itself never goes on the channel.
 */
async function trace<C extends { result?: unknown; error?: unknown }, T>(
  tracing: TracingChannel<unknown, C>,
  context: C,
  fn: () => Promise<T>,
  summarize: (value: T) => C['result'],
): Promise<T> {
  let value!: T;
  await tracing.tracePromise(async () => {
    value = await fn();
    return summarize(value);
  }, context);
  return value;
}

/** Publishes one SDK method call on `integration-sdk:call` (when anyone listens). */
export function traceCall<T>(operation: string, fn: (context: CallContext | undefined) => Promise<T>, summarize: (value: T) => ResultCounts | undefined = () => undefined): Promise<T> {
  const tracing = channels.call;
  if (!tracing?.hasSubscribers && !channels.batch?.hasSubscribers && !channels.attempt?.hasSubscribers) return fn(undefined);
  const parent = current?.getStore()?.call;
  const context: CallContext = parent ? { operation, parent } : { operation };
  const run = () => (current ? current.run({ call: context }, () => fn(context)) : fn(context));
  if (!tracing?.hasSubscribers) return run();
  return trace(tracing, context, run, summarize);
}

/**
 * Publishes one SDK method call that returns an async iterable (`catalog.upsertBatches`) on
 * `integration-sdk:call` (when anyone listens): it starts when the first value is asked for and
 * ends when the iteration does (done, thrown, or left early). Each step runs under the call, so
 * the batches and attempts it starts find it. `count` adds a yielded value's counts to `result`.
 */
export function traceCallIterable<T>(operation: string, source: AsyncIterable<T>, count: (value: T, into: ResultCounts) => void): AsyncIterable<T> {
  if (!channels.call?.hasSubscribers && !channels.batch?.hasSubscribers && !channels.attempt?.hasSubscribers) return source;
  const tracing = channels.call?.hasSubscribers ? channels.call : undefined;
  const context: CallContext = { operation };
  const counts: ResultCounts = {};
  let iterator: AsyncIterator<T> | undefined;
  let ended = false;
  const finish = (failed: boolean, error?: unknown) => {
    if (ended) return;
    ended = true;
    if (!tracing) return;
    if (failed) {
      context.error = error;
      tracing.error.publish(context);
    } else {
      context.result = counts;
    }
    tracing.asyncStart.publish(context);
    tracing.asyncEnd.publish(context);
  };
  const step = async (move: (iterator: AsyncIterator<T>) => Promise<IteratorResult<T>>): Promise<IteratorResult<T>> => {
    if (iterator === undefined) {
      iterator = source[Symbol.asyncIterator]();
      tracing?.start.publish(context);
      tracing?.end.publish(context);
    }
    const running = iterator;
    try {
      const result = await (current ? current.run({ call: context }, () => move(running)) : move(running));
      if (result.done) finish(false);
      else count(result.value, counts);
      return result;
    } catch (error) {
      finish(true, error);
      throw error;
    }
  };
  const traced: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => traced,
    next: () => step((running) => running.next()),
    // Leaving before the first value never started the call: nothing to end.
    return: async (value?: unknown) =>
      iterator === undefined ? { done: true, value: value as T } : step((running) => running.return?.(value) ?? Promise.resolve({ done: true, value: value as T })),
    throw: async (error?: unknown) => (iterator === undefined ? Promise.reject(error) : step((running) => running.throw?.(error) ?? Promise.reject(error))),
  };
  return traced;
}

/**
 * Publishes one batch of a bulk call on `integration-sdk:batch` (when anyone listens), as a child
 * of the call being traced around it (`traceCall`); outside a traced call it only runs `fn`.
 */
export function traceBatch<T>(index: number, items: number, fn: () => Promise<T>, summarize: (value: T) => ResultCounts | undefined): Promise<T> {
  const call = current?.getStore()?.call;
  const tracing = channels.batch;
  if (!call || (!tracing?.hasSubscribers && !channels.attempt?.hasSubscribers)) return fn();
  const context: BatchContext = { operation: call.operation, call, index, items };
  const run = () => (current ? current.run({ call, batch: context }, fn) : fn());
  if (!tracing?.hasSubscribers) return run();
  return trace(tracing, context, run, summarize);
}

/** The call being traced around the caller, if any (a bulk call sets its `batches` count on it). */
export function currentCall(): CallContext | undefined {
  return current?.getStore()?.call;
}

/**
 * Publishes one HTTP attempt on `integration-sdk:attempt` (when anyone listens). `fn` fills
 * `status` and `rateLimitWaitMs` into the context it is given as they become known.
 */
export function traceAttempt<T>(fields: Omit<AttemptContext, 'call' | 'batch'>, fn: (context: AttemptContext | undefined) => Promise<T>): Promise<T> {
  const tracing = channels.attempt;
  if (!tracing?.hasSubscribers) return fn(undefined);
  const parent = current?.getStore();
  const context: AttemptContext = { ...fields, call: parent?.call, batch: parent?.batch };
  return trace(tracing, context as AttemptContext & { result?: unknown }, () => fn(context), () => undefined);
}

/** Publishes one inbox step on `integration-sdk:inbox` (when anyone listens). */
export function traceInbox<T>(fields: InboxContext, fn: (context: InboxContext | undefined) => Promise<T>): Promise<T> {
  const tracing = channels.inbox;
  if (!tracing?.hasSubscribers) return fn(undefined);
  const context: InboxContext = { ...fields };
  return trace(tracing, context as InboxContext & { result?: unknown }, () => fn(context), () => undefined);
}

/** What the inbox gauges of `integration-sdk/otel` read: an inbox's `stats()`. */
export interface InboxStatsSource {
  stats(): Promise<{ pending: number; dead: number; oldestPendingAgeMs?: number | null }>;
}

interface OpenInbox {
  /** The inbox's store: two inboxes on one store are counted once. */
  store: object;
  inbox: InboxStatsSource;
}

// Held on globalThis under a registered symbol so that the ESM and CommonJS builds, loaded side by
// side, see one registry. Weak: an inbox dropped without close() is not kept alive by it.
const OPEN_INBOXES = Symbol.for('integration-sdk.open-inboxes');

function openInboxRefs(): Set<WeakRef<OpenInbox>> {
  const holder = globalThis as { [OPEN_INBOXES]?: Set<WeakRef<OpenInbox>> };
  return (holder[OPEN_INBOXES] ??= new Set());
}

/** Called by `createInbox`: the inbox's stats feed the otel gauges until the returned function is called (on `close()`). */
export function registerOpenInbox(entry: OpenInbox): () => void {
  const ref = new WeakRef(entry);
  openInboxRefs().add(ref);
  return () => void openInboxRefs().delete(ref);
}

/** The inboxes open in this process, one per store. */
export function openInboxes(): InboxStatsSource[] {
  const byStore = new Map<object, InboxStatsSource>();
  for (const ref of openInboxRefs()) {
    const entry = ref.deref();
    if (entry === undefined) openInboxRefs().delete(ref);
    else if (!byStore.has(entry.store)) byStore.set(entry.store, entry.inbox);
  }
  return [...byStore.values()];
}
