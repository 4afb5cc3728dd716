// The instruments of integration-sdk/otel (docs/observability.md lists each one). Names follow
// OpenTelemetry's semantic conventions where one exists (`http.client.request.duration`), else
// live under `integration_sdk.`.
import type { BatchObservableResult, Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api';
import { openInboxes, type InboxStatsSource } from '../diagnostics.ts';

export type { InboxStatsSource };

// The HTTP conventions' advised boundaries for request durations, in seconds.
const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
// Rate-limit waits run from nothing to a minute's refill.
const WAIT_BOUNDARIES = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface Instruments {
  requestDuration: Histogram;
  rateLimitWait: Histogram;
  rateLimited: Counter;
  inboxHandled: Counter;
  inboxDead: Counter;
  /** Stops reading the inbox's stats. */
  close(): void;
}

export function createInstruments(meter: Meter, inbox: InboxStatsSource | undefined): Instruments {
  return {
    requestDuration: meter.createHistogram('http.client.request.duration', {
      description: 'Duration of HTTP client requests (one per attempt).',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BOUNDARIES },
    }),
    rateLimitWait: meter.createHistogram('integration_sdk.rate_limit.wait.duration', {
      description: 'How long an attempt waited on the rate limit before it was sent (the client rate limiter, and a 429 Retry-After pause).',
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BOUNDARIES },
    }),
    rateLimited: meter.createCounter('integration_sdk.http.client.rate_limited', {
      description: 'Attempts the service answered with 429 Too Many Requests.',
      unit: '{response}',
    }),
    inboxHandled: meter.createCounter('integration_sdk.inbox.handled', {
      description: 'Webhook events a worker ran the handler for, by outcome (done, retry, dead, waiting).',
      unit: '{event}',
    }),
    inboxDead: meter.createCounter('integration_sdk.inbox.dead', {
      description: 'Webhook events that went dead in this process (their handler failed maxAttempts times).',
      unit: '{event}',
    }),
    close: observeInboxes(meter, inbox ? () => [inbox] : openInboxes),
  };
}

/** The inbox gauges, read at each collection from the inboxes open in this process (or the one given). */
function observeInboxes(meter: Meter, inboxes: () => InboxStatsSource[]): () => void {
  const pending: ObservableGauge = meter.createObservableGauge('integration_sdk.inbox.pending', {
    description: 'Inbox entries waiting for a worker (status pending), as inbox.stats() reports them.',
    unit: '{event}',
  });
  const deadEntries: ObservableGauge = meter.createObservableGauge('integration_sdk.inbox.dead_entries', {
    description: 'Inbox entries currently dead (kept until retried or purged), as inbox.stats() reports them.',
    unit: '{event}',
  });
  const oldestPending: ObservableGauge = meter.createObservableGauge('integration_sdk.inbox.oldest_pending.age', {
    description: 'Age of the oldest pending inbox entry (0 when none is pending).',
    unit: 's',
  });
  // One stats() per inbox and collection for the three gauges; an inbox whose store cannot answer
  // is left out this time rather than failing the whole collection.
  const observe = async (result: BatchObservableResult) => {
    const all = await Promise.all(inboxes().map((inbox) => inbox.stats().catch(() => undefined)));
    const answered = all.filter((stats) => stats !== undefined);
    if (answered.length === 0) return;
    result.observe(pending, answered.reduce((sum, stats) => sum + stats.pending, 0));
    result.observe(deadEntries, answered.reduce((sum, stats) => sum + stats.dead, 0));
    result.observe(oldestPending, Math.max(...answered.map((stats) => stats.oldestPendingAgeMs ?? 0)) / 1000);
  };
  meter.addBatchObservableCallback(observe, [pending, deadEntries, oldestPending]);
  return () => meter.removeBatchObservableCallback(observe, [pending, deadEntries, oldestPending]);
}
