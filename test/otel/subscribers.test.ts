// The spans and measurements integration-sdk/otel makes of each channel, driven through the
// channel contract itself (traceCall / traceBatch / traceAttempt / traceInbox of src/diagnostics.ts).
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { traceAttempt, traceBatch, traceCall, traceInbox } from '../../src/diagnostics.ts';
import { createApiError, TimeoutError } from '../../src/errors/index.ts';
import { everyRecordedString, instrumentInMemory, type Telemetry } from './helpers.ts';

const API_KEY = 'service_live_0123456789abcdefSECRET';
const PHONE = '+33612345678';
const WEBHOOK_SECRET = 'whsec_5f2b9c0d8e7a6b4c3d2e1f00';
const ROUTE = '/catalog/products/batch';

let telemetry: Telemetry;
afterEach(() => telemetry.stop());

const rateLimited = () =>
  createApiError({ status: 429, code: 'RATE_LIMITED', message: `slow down ${API_KEY}`, requestMethod: 'POST', requestPath: ROUTE });

/** A bulk call of two batches; the second batch's first attempt is answered 429 and retried after waiting. */
async function bulkRun() {
  const attempt = (n: number, wait: number, answer: number) =>
    traceAttempt({ method: 'POST', route: ROUTE, serverAddress: 'sandbox.test:4010', attempt: n }, async (context) => {
      context!.rateLimitWaitMs = wait;
      context!.status = answer;
      if (answer === 429) throw rateLimited();
    });
  return traceCall(
    'catalog.upsertProducts',
    async (call) => {
      call!.batches = 2;
      await traceBatch(0, 500, () => attempt(1, 0, 207), () => ({ ok: 499, failed: 1 }));
      await traceBatch(1, 20, async () => {
        await attempt(1, 0, 429).catch(() => undefined);
        await attempt(2, 1500, 200);
      }, () => ({ ok: 20, failed: 0 }));
      return { total: 520 };
    },
    (value) => ({ total: value.total, ok: 519, failed: 1 }),
  );
}

describe('spans of an SDK call', () => {
  it('makes an INTERNAL call span, batch spans under it and CLIENT attempt spans under their batch', async () => {
    telemetry = instrumentInMemory();
    await bulkRun();

    const call = telemetry.span('catalog.upsertProducts');
    expect(call.kind).toBe(SpanKind.INTERNAL);
    expect(call.parentSpanContext).toBeUndefined();
    expect(call.attributes).toMatchObject({ 'integration_sdk.operation': 'catalog.upsertProducts', 'integration_sdk.batches': 2, 'integration_sdk.result.total': 520, 'integration_sdk.result.ok': 519, 'integration_sdk.result.failed': 1 });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);

    const batches = telemetry.children(call);
    expect(batches.map((span) => [span.name, span.attributes['integration_sdk.batch.index'], span.attributes['integration_sdk.batch.items']])).toEqual([
      ['catalog.upsertProducts batch', 0, 500],
      ['catalog.upsertProducts batch', 1, 20],
    ]);
    expect(batches[0]!.attributes).toMatchObject({ 'integration_sdk.batch.result.ok': 499, 'integration_sdk.batch.result.failed': 1 });

    const [first, retry] = telemetry.children(batches[1]!);
    expect(telemetry.children(batches[0]!)).toHaveLength(1);
    for (const span of [first!, retry!]) {
      expect(span.name).toBe(`POST ${ROUTE}`);
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.template': ROUTE, 'server.address': 'sandbox.test', 'server.port': 4010 });
    }
    expect(first!.attributes['http.response.status_code']).toBe(429);
    expect(first!.attributes['error.type']).toBe('429');
    expect(first!.attributes['http.request.resend_count']).toBeUndefined();
    expect(first!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'RateLimitError: RATE_LIMITED' });
    expect(first!.events).toEqual([]);

    expect(retry!.attributes['http.request.resend_count']).toBe(1);
    expect(retry!.attributes['http.response.status_code']).toBe(200);
    expect(retry!.attributes['error.type']).toBeUndefined();
    expect(retry!.status.code).toBe(SpanStatusCode.UNSET);
    expect(retry!.events.map((event) => [event.name, event.attributes])).toEqual([['integration_sdk.rate_limit.wait', { 'integration_sdk.rate_limit.wait_ms': 1500 }]]);
  });

  it('puts an attempt outside any bulk call under its call span, and names a non-HTTP failure by its class', async () => {
    telemetry = instrumentInMemory();
    const timeout = new TimeoutError(`timed out calling with ${API_KEY}`);
    await expect(
      traceCall('orders.get', () => traceAttempt({ method: 'GET', route: '/orders/{id}', serverAddress: 'api.example.com', attempt: 1 }, async () => { throw timeout; })),
    ).rejects.toBe(timeout);

    const call = telemetry.span('orders.get');
    const attempt = telemetry.span('GET /orders/{id}');
    expect(attempt.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(attempt.attributes).toMatchObject({ 'server.address': 'api.example.com', 'error.type': 'TimeoutError' });
    expect(attempt.attributes['server.port']).toBeUndefined();
    expect(attempt.attributes['http.response.status_code']).toBeUndefined();
    expect(call.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TimeoutError' });
    expect(call.attributes['error.type']).toBe('TimeoutError');
  });

  it('stamps the rate-limit wait event inside its span when the wait came before the attempt, as the transport reports it', async () => {
    telemetry = instrumentInMemory();
    await traceAttempt({ method: 'GET', route: '/health', serverAddress: 'api.example.com', attempt: 1, rateLimitWaitMs: 5_000 }, async (context) => { context!.status = 200; });
    const span = telemetry.span('GET /health');
    const ns = ([seconds, nanos]: [number, number]) => seconds * 1e9 + nanos;
    expect(span.events.map((event) => [event.name, event.attributes])).toEqual([['integration_sdk.rate_limit.wait', { 'integration_sdk.rate_limit.wait_ms': 5_000 }]]);
    expect(ns(span.events[0]!.time)).toBeGreaterThanOrEqual(ns(span.startTime));
    expect(ns(span.events[0]!.time)).toBeLessThanOrEqual(ns(span.endTime));
  });

  it('names an attempt of an unknown method HTTP and keeps the method as sent', async () => {
    telemetry = instrumentInMemory();
    await traceAttempt({ method: 'PURGE', route: '/health', serverAddress: '[::1]:8080', attempt: 1 }, async (context) => { context!.status = 204; });
    const span = telemetry.span('HTTP');
    expect(span.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'PURGE', 'server.address': '::1', 'server.port': 8080 });
  });
});

describe('spans of the inbox', () => {
  it('makes a CONSUMER span per event handled: ERROR when the handler fails, then OK on its next try', async () => {
    telemetry = instrumentInMemory();
    const handle = (attempt: number, fails: boolean) =>
      traceInbox({ kind: 'handled', event: 'order.created', deliveryId: 'dlv_01', attempt }, async (context) => {
        if (fails) {
          context!.outcome = 'retry';
          throw new Error(`customer ${PHONE} not found`);
        }
        context!.outcome = 'done';
      }).catch(() => undefined);
    await traceInbox({ kind: 'received', event: 'order.created', deliveryId: 'dlv_01' }, async (context) => { context!.outcome = 'stored'; });
    await handle(1, true);
    await handle(2, false);

    const [received, failed, succeeded] = telemetry.spans();
    expect(received!.name).toBe('receive order.created');
    expect(received!.kind).toBe(SpanKind.INTERNAL);
    expect(received!.attributes).toMatchObject({ 'messaging.operation.type': 'receive', 'integration_sdk.inbox.outcome': 'stored', 'messaging.message.id': 'dlv_01' });
    for (const span of [failed!, succeeded!]) {
      expect(span.name).toBe('process order.created');
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.links).toEqual([]);
    }
    expect(failed!.attributes).toMatchObject({ 'integration_sdk.inbox.attempt': 1, 'integration_sdk.inbox.outcome': 'retry', 'error.type': 'Error' });
    expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Error' });
    expect(succeeded!.attributes).toMatchObject({ 'integration_sdk.inbox.attempt': 2, 'integration_sdk.inbox.outcome': 'done' });
    expect(succeeded!.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe('metrics', () => {
  it('records each attempt in http.client.request.duration with the HTTP attributes, waits and 429s', async () => {
    telemetry = instrumentInMemory();
    await bulkRun();

    const duration = (await telemetry.metric('http.client.request.duration'))!;
    expect(duration.descriptor.unit).toBe('s');
    expect(duration.dataPointType).toBe(DataPointType.HISTOGRAM);
    const byStatus = new Map(duration.dataPoints.map((point) => [point.attributes['http.response.status_code'], point]));
    expect((byStatus.get(429)!.value as Histogram).count).toBe(1);
    expect(byStatus.get(429)!.attributes).toEqual({ 'http.request.method': 'POST', 'url.template': ROUTE, 'server.address': 'sandbox.test', 'server.port': 4010, 'http.response.status_code': 429, 'error.type': '429' });
    expect((byStatus.get(200)!.value as Histogram).count).toBe(1);
    expect((byStatus.get(207)!.value as Histogram).count).toBe(1);

    const waits = (await telemetry.metric('integration_sdk.rate_limit.wait.duration'))!;
    const wait = waits.dataPoints[0]!.value as Histogram;
    expect(wait.count).toBe(3);
    expect(wait.sum).toBeCloseTo(1.5);
    expect(wait.max).toBeCloseTo(1.5);

    const limited = (await telemetry.metric('integration_sdk.http.client.rate_limited'))!;
    expect(limited.dataPoints.map((point) => [point.attributes, point.value])).toEqual([[{ 'http.request.method': 'POST', 'url.template': ROUTE }, 1]]);
  });

  it('counts events handled by outcome and the ones that went dead', async () => {
    telemetry = instrumentInMemory();
    for (const outcome of ['retry', 'dead', 'done']) {
      await traceInbox({ kind: 'handled', event: 'order.paid', deliveryId: `dlv_${outcome}`, attempt: 1 }, async (context) => { context!.outcome = outcome; });
    }
    const handled = (await telemetry.metric('integration_sdk.inbox.handled'))!;
    expect(Object.fromEntries(handled.dataPoints.map((point) => [point.attributes['integration_sdk.inbox.outcome'], point.value]))).toEqual({ retry: 1, dead: 1, done: 1 });
    const dead = (await telemetry.metric('integration_sdk.inbox.dead'))!;
    expect(dead.dataPoints.map((point) => [point.attributes, point.value])).toEqual([[{ 'integration_sdk.webhook.event': 'order.paid' }, 1]]);
    expect(await telemetry.metric('integration_sdk.inbox.pending')).toBeUndefined();
  });

  it('reads the pending, dead and oldest-pending gauges from the inbox given, once per collection', async () => {
    let reads = 0;
    const inbox = { stats: async () => ({ received: 9, pending: 4, processing: 1, done: 2, dead: 2, oldestPendingAgeMs: 30_000, reads: (reads += 1) }) };
    telemetry = instrumentInMemory({ inbox });
    expect((await telemetry.metric('integration_sdk.inbox.pending'))!.dataPoints[0]!.value).toBe(4);
    reads = 0;
    const metrics = await telemetry.metrics();
    expect(reads).toBe(1);
    const value = (name: string) => metrics.find((metric) => metric.descriptor.name === name)!.dataPoints[0]!.value;
    expect([value('integration_sdk.inbox.dead_entries'), value('integration_sdk.inbox.oldest_pending.age')]).toEqual([2, 30]);
  });
});

describe('what is never recorded', () => {
  it('keeps the key, the webhook secret, a phone number and error messages out of every span, event and metric attribute', async () => {
    telemetry = instrumentInMemory();
    await bulkRun();
    await traceCall('customers.findByPhone', async () => { throw new Error(`no customer ${PHONE} for ${API_KEY}`); }).catch(() => undefined);
    await traceInbox({ kind: 'handled', event: 'order.created', deliveryId: 'dlv_02', attempt: 3 }, async (context) => {
      context!.outcome = 'dead';
      throw new Error(`order of ${PHONE}`);
    }).catch(() => undefined);

    await traceInbox({ kind: 'received', event: 'order.created', deliveryId: 'dlv_03' }, async (context) => {
      context!.outcome = 'unavailable';
      throw new Error(`could not store a delivery signed with ${WEBHOOK_SECRET}`);
    }).catch(() => undefined);

    const recorded = everyRecordedString(telemetry.spans(), await telemetry.metrics());
    expect(recorded.length).toBeGreaterThan(50);
    for (const secret of [API_KEY, PHONE, WEBHOOK_SECRET, 'slow down', 'no customer', 'order of', 'could not store']) {
      expect(recorded.filter((text) => text.includes(secret))).toEqual([]);
    }
  });
});
