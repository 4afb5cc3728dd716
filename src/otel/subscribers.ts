// Turns the four channels' events into spans and measurements. Spans open on `start` (inside the
// caller's async context, so a call's span is a child of the span active when the user called the
// SDK) and close on `asyncEnd`; a context object maps to its span through a WeakMap, which is how
// an attempt finds its batch's or call's span (the contexts carry their parents).
import { context as otelContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { AttemptContext, BatchContext, CallContext, InboxContext } from '../diagnostics.ts';
import { attemptAttributes, countAttributes, errorType, requestMethod, safeErrorMessage } from './attributes.ts';
import type { Instruments } from './metrics.ts';

/** The handlers of one TracingChannel, as `TracingChannel#subscribe` takes them. */
export interface ChannelHandlers<C> {
  start(context: C): void;
  end(context: C): void;
  asyncStart(context: C): void;
  asyncEnd(context: C): void;
  error(context: C): void;
}

interface Open {
  span: Span;
  startedAt: number;
  /** Attempts: the rate-limit wait event was added when the span started. */
  waitRecorded?: boolean;
}

const addWaitEvent = (span: Span, waitMs: number, time?: number) =>
  span.addEvent('integration_sdk.rate_limit.wait', { 'integration_sdk.rate_limit.wait_ms': waitMs }, time);

export interface Subscribers {
  call: ChannelHandlers<CallContext>;
  batch: ChannelHandlers<BatchContext>;
  attempt: ChannelHandlers<AttemptContext>;
  inbox: ChannelHandlers<InboxContext>;
  /** Ends the spans still open (calls in flight when instrumentation stops), so none is lost. */
  endOpenSpans(): void;
}

const INBOX_FAILED = new Set(['retry', 'dead', 'unavailable']);

/** `receive {event}` / `process {event}`, as the messaging conventions name spans. */
function inboxSpanName(inbox: InboxContext): string {
  return `${inbox.kind === 'handled' ? 'process' : 'receive'} ${inbox.event ?? 'unknown'}`;
}

function inboxAttributes(inbox: InboxContext): Attributes {
  const attributes: Attributes = { 'integration_sdk.webhook.event': inbox.event ?? 'unknown' };
  if (inbox.deliveryId !== undefined) attributes['messaging.message.id'] = inbox.deliveryId;
  if (inbox.attempt !== undefined) attributes['integration_sdk.inbox.attempt'] = inbox.attempt;
  return attributes;
}

export function createSubscribers(tracer: Tracer, instruments: Instruments): Subscribers {
  const spans = new WeakMap<object, Open>();
  const open = new Set<Span>();

  const begin = (key: object, name: string, kind: SpanKind, attributes: Attributes, parent?: object) => {
    const parentSpan = parent ? spans.get(parent)?.span : undefined;
    const parentContext = parentSpan ? trace.setSpan(otelContext.active(), parentSpan) : otelContext.active();
    const span = tracer.startSpan(name, { kind, attributes }, parentContext);
    spans.set(key, { span, startedAt: performance.now() });
    open.add(span);
  };
  // Takes the span out of the map: a context settles once, and a late second event finds nothing.
  const take = (key: object): Open | undefined => {
    const entry = spans.get(key);
    if (!entry) return undefined;
    spans.delete(key);
    open.delete(entry.span);
    return entry;
  };
  const fail = (span: Span, error: unknown, type: string | undefined) => {
    if (type) span.setAttribute('error.type', type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error === undefined ? type : safeErrorMessage(error) });
  };

  // A traced function that threw synchronously gets `error` then `end` and no `asyncEnd`.
  const endIfThrown = <C extends { error?: unknown }>(finish: (context: C) => void) => (context: C) => {
    if (context.error !== undefined) finish(context);
  };
  const ignore = () => {};

  const finishCall = (call: CallContext) => {
    const entry = take(call);
    if (!entry) return;
    const { span } = entry;
    if (call.batches !== undefined) span.setAttribute('integration_sdk.batches', call.batches);
    span.setAttributes(countAttributes('integration_sdk.result', call.result));
    if (call.error !== undefined) fail(span, call.error, errorType(undefined, call.error));
    span.end();
  };

  const finishBatch = (batch: BatchContext) => {
    const entry = take(batch);
    if (!entry) return;
    entry.span.setAttributes(countAttributes('integration_sdk.batch.result', batch.result));
    if (batch.error !== undefined) fail(entry.span, batch.error, errorType(undefined, batch.error));
    entry.span.end();
  };

  const finishAttempt = (attempt: AttemptContext) => {
    const entry = take(attempt);
    if (!entry) return;
    const { span, startedAt } = entry;
    const attributes = attemptAttributes(attempt);
    const type = errorType(attempt.status, attempt.error);
    if (attempt.status !== undefined) {
      attributes['http.response.status_code'] = attempt.status;
      span.setAttribute('http.response.status_code', attempt.status);
    }
    if (type) attributes['error.type'] = type;
    const waitMs = attempt.rateLimitWaitMs;
    if (waitMs !== undefined) {
      instruments.rateLimitWait.record(waitMs / 1000, { 'url.template': attempt.route });
      // A wait learnt only now happened inside the attempt: stamped when it ended, never past the span's end.
      if (waitMs > 0 && !entry.waitRecorded) addWaitEvent(span, waitMs, performance.timeOrigin + Math.min(startedAt + waitMs, performance.now()));
    }
    if (attempt.status === 429) instruments.rateLimited.add(1, { 'http.request.method': requestMethod(attempt.method), 'url.template': attempt.route });
    instruments.requestDuration.record((performance.now() - startedAt) / 1000, attributes);
    if (type) fail(span, attempt.error, type);
    span.end();
  };

  const finishInbox = (inbox: InboxContext) => {
    const entry = take(inbox);
    if (!entry) return;
    const { span } = entry;
    // The receiver learns the event name and delivery id only once the delivery is verified.
    span.updateName(inboxSpanName(inbox));
    span.setAttributes(inboxAttributes(inbox));
    if (inbox.outcome) span.setAttribute('integration_sdk.inbox.outcome', inbox.outcome);
    if (inbox.kind === 'handled') {
      const attributes = { 'integration_sdk.webhook.event': inbox.event ?? 'unknown', 'integration_sdk.inbox.outcome': inbox.outcome ?? (inbox.error === undefined ? 'done' : 'error') };
      instruments.inboxHandled.add(1, attributes);
      if (inbox.outcome === 'dead') instruments.inboxDead.add(1, { 'integration_sdk.webhook.event': attributes['integration_sdk.webhook.event'] });
    }
    if (inbox.error !== undefined || INBOX_FAILED.has(inbox.outcome ?? '')) {
      fail(span, inbox.error, inbox.error === undefined ? inbox.outcome : errorType(undefined, inbox.error));
    }
    span.end();
  };

  return {
    call: {
      start: (call) => begin(call, call.operation, SpanKind.INTERNAL, { 'integration_sdk.operation': call.operation }, call.parent),
      end: endIfThrown(finishCall),
      asyncStart: ignore,
      asyncEnd: finishCall,
      error: ignore,
    },
    batch: {
      start: (batch) =>
        begin(batch, `${batch.operation} batch`, SpanKind.INTERNAL, {
          'integration_sdk.operation': batch.operation,
          'integration_sdk.batch.index': batch.index,
          'integration_sdk.batch.items': batch.items,
        }, batch.call),
      end: endIfThrown(finishBatch),
      asyncStart: ignore,
      asyncEnd: finishBatch,
      error: ignore,
    },
    attempt: {
      start: (attempt) => {
        const attributes = attemptAttributes(attempt);
        if (attempt.attempt > 1) attributes['http.request.resend_count'] = attempt.attempt - 1;
        // HTTP client span name: `{method} {url.template}`; `HTTP` alone for a method it cannot name.
        const method = requestMethod(attempt.method);
        const name = method === '_OTHER' ? 'HTTP' : `${method} ${attempt.route}`;
        if (method === '_OTHER') attributes['http.request.method_original'] = attempt.method;
        begin(attempt, name, SpanKind.CLIENT, attributes, attempt.batch ?? attempt.call);
        // The transport waits for the rate limit (its limiter, a 429's Retry-After) before the
        // attempt starts: the wait ended now, as the span starts.
        const entry = spans.get(attempt);
        if (entry && attempt.rateLimitWaitMs !== undefined && attempt.rateLimitWaitMs > 0) {
          addWaitEvent(entry.span, attempt.rateLimitWaitMs);
          entry.waitRecorded = true;
        }
      },
      end: endIfThrown(finishAttempt),
      asyncStart: ignore,
      asyncEnd: finishAttempt,
      error: ignore,
    },
    inbox: {
      start: (inbox) => begin(inbox, inboxSpanName(inbox), inbox.kind === 'handled' ? SpanKind.CONSUMER : SpanKind.INTERNAL, {
        // Receiving runs inside the user's own HTTP server span: INTERNAL, not a second SERVER span.
        'messaging.operation.type': inbox.kind === 'handled' ? 'process' : 'receive',
        'messaging.operation.name': inbox.kind === 'handled' ? 'process' : 'receive',
        ...inboxAttributes(inbox),
      }),
      end: endIfThrown(finishInbox),
      asyncStart: ignore,
      asyncEnd: finishInbox,
      error: ignore,
    },
    endOpenSpans() {
      for (const span of open) span.end();
      open.clear();
    },
  };
}
