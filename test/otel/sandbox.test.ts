// integration-sdk/otel end to end: the real client and the real sandbox over a loopback socket,
// spans and metrics in the OpenTelemetry SDK's in-memory exporter and a collecting reader.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProductItem } from 'integration-sdk';
import { createInbox } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { signWebhook } from 'integration-sdk/webhooks';
import signatures from '../fixtures/webhook-signatures.json' with { type: 'json' };
import { tempDir } from '../inbox/support/temp-dir.ts';
import { tenantsWorld } from '../inbox/support/tenants-world.ts';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { clientFor, ScaledClock, startSandbox } from '../e2e/helpers.ts';
import { everyRecordedString, instrumentInMemory, type Telemetry } from './helpers.ts';

const ROUTE = '/products/bulk';

let telemetry: Telemetry;
afterEach(() => telemetry.stop());

const products = (count: number): ProductItem[] =>
  Array.from({ length: count }, (_, i) => ({ external_id: `OTEL-${i}`, name: `Produto ${i}`, price: 1 + i }));

// End to end: the client publishes integration-sdk:call and :attempt, the bulk engine :batch.
describe('a bulk run against the sandbox', () => {
  it('records the call, its batches, a 429 attempt and its retry, the rate-limit wait, and the metrics', async () => {
    telemetry = instrumentInMemory();
    // Every other request answered 429 (Retry-After 1 s, 50 ms at 20×), and a client bucket of one
    // request per 100 ms (client time) so that the attempts after the first wait for it.
    const sandbox = await startSandbox({ faults: { rate: 0.5, seed: 7, kinds: ['error429'] } });
    const clock = new ScaledClock(20);
    const { client, exchanges } = clientFor(sandbox, { clock, maxRetries: 10, rateLimit: { requestsPerMinute: 600, burst: 1 } });

    const result = await client.catalog.upsertProducts(products(30), { batchSize: 10 });
    expect(result.results).toHaveLength(30);
    const limitedAnswers = exchanges.filter((exchange) => exchange.status === 429).length;
    expect(limitedAnswers).toBeGreaterThan(0);

    const call = telemetry.span('catalog.upsertProducts');
    expect(call.kind).toBe(SpanKind.INTERNAL);
    expect(call.attributes).toMatchObject({ 'integration_sdk.operation': 'catalog.upsertProducts', 'integration_sdk.batches': 3 });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);

    const batches = telemetry.children(call);
    expect(batches.map((batch) => [batch.name, batch.attributes['integration_sdk.batch.index'], batch.attributes['integration_sdk.batch.items']])).toEqual([
      ['catalog.upsertProducts batch', 0, 10],
      ['catalog.upsertProducts batch', 1, 10],
      ['catalog.upsertProducts batch', 2, 10],
    ]);

    const attempts: ReadableSpan[] = batches.flatMap((batch) => telemetry.children(batch));
    expect(attempts).toHaveLength(exchanges.length);
    for (const attempt of attempts) {
      expect(attempt.name).toBe(`POST ${ROUTE}`);
      expect(attempt.kind).toBe(SpanKind.CLIENT);
      expect(attempt.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.template': ROUTE, 'server.address': '127.0.0.1', 'server.port': Number(new URL(sandbox.url).port) });
    }
    // A retried batch: its first attempt 429 (ERROR, error.type "429"), the next one resent and answered.
    const retried = batches.find((batch) => telemetry.children(batch).length > 1)!;
    const [limited, resent] = telemetry.children(retried);
    expect(limited!.attributes).toMatchObject({ 'http.response.status_code': 429, 'error.type': '429' });
    expect(limited!.attributes['http.request.resend_count']).toBeUndefined();
    expect(limited!.status.code).toBe(SpanStatusCode.ERROR);
    expect(limited!.status.message).toMatch(/^RateLimitError/);
    expect(resent!.attributes['http.request.resend_count']).toBe(1);
    // Its wait on the rate limit: the 429's Retry-After (1 s, client time) at least.
    const resentWait = resent!.events.find((event) => event.name === 'integration_sdk.rate_limit.wait');
    expect(resentWait?.attributes!['integration_sdk.rate_limit.wait_ms']).toBeGreaterThanOrEqual(1000);
    const ns = ([seconds, nanos]: [number, number]) => seconds * 1e9 + nanos;
    expect(ns(resentWait!.time)).toBeLessThanOrEqual(ns(resent!.endTime));

    const waits = attempts.flatMap((attempt) => attempt.events.filter((event) => event.name === 'integration_sdk.rate_limit.wait'));
    expect(waits.length).toBeGreaterThan(0);
    for (const wait of waits) expect(wait.attributes!['integration_sdk.rate_limit.wait_ms']).toBeGreaterThan(0);

    const limitedCount = (await telemetry.metric('integration_sdk.http.client.rate_limited'))!.dataPoints.reduce((sum, point) => sum + (point.value as number), 0);
    expect(limitedCount).toBe(limitedAnswers);
    const durations = (await telemetry.metric('http.client.request.duration'))!.dataPoints;
    expect(durations.reduce((sum, point) => sum + (point.value as { count: number }).count, 0)).toBe(exchanges.length);
  });
});

describe('what is never recorded, end to end (client side; see the note above)', () => {
  it('no span name, attribute, event, status or metric attribute holds the key or a customer phone', async () => {
    telemetry = instrumentInMemory();
    const sandbox = await startSandbox({ faults: { rate: 0.4, seed: 3, kinds: ['error429', 'error503'] } });
    const { client } = clientFor(sandbox, { clock: new ScaledClock(20), maxRetries: 10 });
    const phone = sandbox.seed.customers[0]!.phone;

    await client.catalog.upsertProducts(products(12), { batchSize: 5 });
    await client.loyalty.balance({ phone });
    await client.loyalty.balance({ phone: '+5511999999999' }).catch(() => undefined); // unknown customer: an error answer
    await client.orders.get('00000000-0000-4000-8000-000000000000').catch(() => undefined);

    const recorded = everyRecordedString(telemetry.spans(), await telemetry.metrics());
    expect(telemetry.spans().length).toBeGreaterThan(6);
    const keySecret = sandbox.apiKey.split('_').at(-1)!;
    for (const secret of [sandbox.apiKey, keySecret, phone, phone.replace('+', ''), '5511999999999']) {
      expect(recorded.filter((text) => text.includes(secret))).toEqual([]);
    }
  });
});

describe('what is never recorded for many merchants', () => {
  it("no span or metric holds a tenant's key, its webhook secrets or the registry's encryption key, through connect, calls, a revoked key, a delivery and a rotation", async () => {
    telemetry = instrumentInMemory();
    const world = await tenantsWorld({ merchants: 2 });
    const keys = world.sandbox.merchants.map((merchant) => merchant.keys[0]!.apiKey);
    await world.tenants.connect('loja-a', { apiKey: keys[0]! });
    await world.tenants.connect('loja-b', { apiKey: keys[1]! });
    await world.tenants.client('loja-a').health();
    world.sandbox.createOrder({ store_id: world.sandbox.merchants[0]!.storeIds[0]! });
    await world.sandbox.idle();
    const before = (await tenantsInternals(world.tenants)!.secretsFor('loja-a'))!.map((each) => each.secret);
    await world.tenants.rotateWebhookSecret('loja-a');
    const after = (await tenantsInternals(world.tenants)!.secretsFor('loja-a'))!.map((each) => each.secret);
    world.sandbox.revokeKey(keys[1]!);
    await world.tenants.client('loja-b').health().catch(() => undefined);

    const recorded = everyRecordedString(telemetry.spans(), await telemetry.metrics());
    expect(telemetry.spans().length).toBeGreaterThan(4);
    const keySecrets = keys.map((key) => key.split('_').at(-1)!);
    for (const secret of [...keys, ...keySecrets, ...before, ...after, world.encryptionKey]) {
      expect(recorded.filter((text) => text.includes(secret))).toEqual([]);
    }
  });
});

describe('an inbox event whose handler fails once, then succeeds', () => {
  it('records a receive span, then a failed and a successful CONSUMER span, with no payload, phone or secret', async () => {
    telemetry = instrumentInMemory();
    const dir = tempDir('otel-inbox');
    const secret = 'whsec_otelTestSecret0123456789abcdef';
    const vector = signatures.vectors[0]!;
    const data = (JSON.parse(Buffer.from(vector.body_base64, 'base64').toString('utf8')) as { data: unknown }).data;
    const phones = JSON.stringify(data).match(/\+\d{8,15}/g) ?? [];
    const inbox = createInbox({ secret, store: sqliteStore({ path: join(dir.path, 'inbox.db') }) });
    const runs: number[] = [];
    const worker = inbox.startWorker({
      handlers: {
        'order.created': (_event, ctx) => {
          runs.push(ctx.attempt);
          if (ctx.attempt === 1) throw new Error(`ERP rejected the order of ${phones[0] ?? 'a customer'}`);
        },
      },
      retryDelayMs: () => 0,
      pollMs: 20,
      onError: () => {},
    });
    try {
      const delivery = signWebhook({ payload: { event: 'order.created', data }, secret, deliveryId: 'dlv-otel-1' });
      const answer = await inbox.handler(new Request('http://localhost/webhooks', { method: 'POST', body: delivery.body, headers: delivery.headers }));
      expect(answer.status).toBeLessThan(300);
      await vi.waitFor(async () => expect((await inbox.stats()).done).toBe(1), { timeout: 10_000, interval: 20 });
    } finally {
      await worker.stop();
      await inbox.close();
      dir.remove();
    }
    expect(runs).toEqual([1, 2]);

    const received = telemetry.span('receive order.created');
    expect(received.attributes).toMatchObject({ 'messaging.message.id': 'dlv-otel-1', 'integration_sdk.inbox.outcome': 'stored' });
    const processed = telemetry.spans().filter((span) => span.name === 'process order.created');
    expect(processed.map((span) => [span.kind, span.attributes['integration_sdk.inbox.attempt'], span.attributes['integration_sdk.inbox.outcome'], span.status.code])).toEqual([
      [SpanKind.CONSUMER, 1, 'retry', SpanStatusCode.ERROR],
      [SpanKind.CONSUMER, 2, 'done', SpanStatusCode.UNSET],
    ]);
    for (const span of processed) expect(span.links).toEqual([]);

    const handled = (await telemetry.metric('integration_sdk.inbox.handled'))!;
    expect(Object.fromEntries(handled.dataPoints.map((point) => [point.attributes['integration_sdk.inbox.outcome'], point.value]))).toEqual({ retry: 1, done: 1 });

    const recorded = everyRecordedString(telemetry.spans(), await telemetry.metrics());
    for (const text of [secret, ...phones, 'ERP rejected']) expect(recorded.filter((value) => value.includes(text))).toEqual([]);
  });
});

describe('the inbox gauges without an inbox option', () => {
  it('read every inbox open in the process, once per store, until it is closed', async () => {
    telemetry = instrumentInMemory();
    const dir = tempDir('otel-gauges');
    const secret = 'whsec_otelGaugeSecret0123456789abcdef';
    const store = sqliteStore({ path: join(dir.path, 'a.db') });
    const first = createInbox({ secret, store });
    // A second inbox on the same store object counts once; one on another file adds its own.
    const sameStore = createInbox({ secret, store });
    const other = createInbox({ secret, store: sqliteStore({ path: join(dir.path, 'b.db') }) });
    const deliver = async (inbox: typeof first, deliveryId: string) => {
      const data = (JSON.parse(Buffer.from(signatures.vectors[0]!.body_base64, 'base64').toString('utf8')) as { data: unknown }).data;
      const delivery = signWebhook({ payload: { event: 'order.created', data }, secret, deliveryId });
      const answer = await inbox.handler(new Request('http://localhost/webhooks', { method: 'POST', body: delivery.body, headers: delivery.headers }));
      expect(answer.status).toBeLessThan(300);
    };
    try {
      await deliver(first, 'dlv-gauge-1');
      await deliver(first, 'dlv-gauge-2');
      await deliver(other, 'dlv-gauge-3');
      expect((await telemetry.metric('integration_sdk.inbox.pending'))!.dataPoints[0]!.value).toBe(3);
      await other.close();
      expect((await telemetry.metric('integration_sdk.inbox.pending'))!.dataPoints[0]!.value).toBe(2);
    } finally {
      await other.close();
      await sameStore.close();
      await first.close().catch(() => {});
      dir.remove();
    }
  });
});
