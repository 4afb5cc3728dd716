/**
 * `integration-sdk/otel`: OpenTelemetry spans and metrics from the SDK's diagnostics channels
 * (`integration-sdk:call`, `:batch`, `:attempt`, `:inbox`). Needs `@opentelemetry/api` ≥ 1.4, an
 * optional peer dependency that only this entry imports.
 *
 * @packageDocumentation
 */
import diagnostics from 'node:diagnostics_channel';
import { metrics, trace } from '@opentelemetry/api';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { CHANNEL_NAMES } from '../diagnostics.ts';
import { VERSION } from '../version.ts';
import { createInstruments, type InboxStatsSource } from './metrics.ts';
import { createSubscribers, type ChannelHandlers } from './subscribers.ts';

export type { InboxStatsSource } from './metrics.ts';

export interface InstrumentIntegrationSdkOptions {
  /** Where spans go; the global provider (`trace.getTracerProvider()`) when omitted. */
  tracerProvider?: TracerProvider;
  /** Where measurements go; the global provider (`metrics.getMeterProvider()`) when omitted. */
  meterProvider?: MeterProvider;
  /**
   * The inbox whose `stats()` feeds the `integration_sdk.inbox.pending`, `.dead_entries` and
   * `.oldest_pending.age` gauges at each collection. By default every inbox open in this process
   * (made by `createInbox` and not yet closed), counted once per store.
   */
  inbox?: InboxStatsSource;
}

const INSTRUMENTATION_SCOPE = 'integration-sdk';

/** Stops the instrumentation in place, if any: instrumenting again replaces it. */
let active: (() => void) | undefined;

/**
 * Subscribes to the SDK's diagnostics channels and records spans (a span per SDK call, a CLIENT
 * span per HTTP attempt, a span per bulk batch, a CONSUMER span per inbox event handled) and
 * metrics (`http.client.request.duration`, rate-limit waits, 429s, inbox outcomes). Returns a
 * function that unsubscribes everything; calling it again does nothing.
 *
 * One instrumentation at a time per process: calling `instrumentIntegrationSdk` again stops the
 * previous one first (its stop function then does nothing), so spans are never recorded twice.
 *
 * @example
 * ```ts
 * import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
 * import { instrumentIntegrationSdk } from 'integration-sdk/otel';
 *
 * const tracerProvider = new NodeTracerProvider({ spanProcessors: [...] });
 * tracerProvider.register();
 * const stop = instrumentIntegrationSdk({ tracerProvider });
 * // ... use IntegrationClient as usual ...
 * stop();
 * ```
 */
export function instrumentIntegrationSdk(options: InstrumentIntegrationSdkOptions = {}): () => void {
  active?.();
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE, VERSION);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE, VERSION);
  const instruments = createInstruments(meter, options.inbox);
  const subscribers = createSubscribers(tracer, instruments);

  const subscriptions: [string, ChannelHandlers<never>][] = [
    [CHANNEL_NAMES.call, subscribers.call],
    [CHANNEL_NAMES.batch, subscribers.batch],
    [CHANNEL_NAMES.attempt, subscribers.attempt],
    [CHANNEL_NAMES.inbox, subscribers.inbox],
  ];
  for (const [name, handlers] of subscriptions) diagnostics.tracingChannel(name).subscribe(handlers as never);

  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (active === stop) active = undefined;
    for (const [name, handlers] of subscriptions) diagnostics.tracingChannel(name).unsubscribe(handlers as never);
    instruments.close();
    subscribers.endOpenSpans();
  };
  active = stop;
  return stop;
}

/** The channels' context types, for subscribing to `node:diagnostics_channel` directly (type-only: loads nothing). */
export type { AttemptContext, BatchContext, CallContext, InboxContext, ResultCounts } from '../diagnostics.ts';
export { CHANNEL_NAMES } from '../diagnostics.ts';
