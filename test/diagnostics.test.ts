// The call and attempt channels as a tracer sees them: a real diagnostics_channel subscriber.
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AttemptContext, CallContext } from '../src/diagnostics.ts';
import { API_KEY, ENTRY, HEALTH, ORDER, PHONE, SECRET_PART, envelope, fakeService, json, makeClient, settle } from './support/fake-service.ts';

interface Seen {
  calls: CallContext[];
  attempts: AttemptContext[];
}

/** Subscribes to both channels for one test; contexts are collected when they end. */
function subscribe(): Seen & { stop: () => void } {
  const seen: Seen = { calls: [], attempts: [] };
  const call = tracingChannel<unknown, CallContext>('integration-sdk:call');
  const attempt = tracingChannel<unknown, AttemptContext>('integration-sdk:attempt');
  const onCall = { asyncEnd: (context: CallContext) => void seen.calls.push(context), error: () => {} };
  const onAttempt = { asyncEnd: (context: AttemptContext) => void seen.attempts.push(context), error: () => {} };
  call.subscribe(onCall as never);
  attempt.subscribe(onAttempt as never);
  return { ...seen, stop: () => (call.unsubscribe(onCall as never), attempt.unsubscribe(onAttempt as never)) };
}

let seen: ReturnType<typeof subscribe>;
beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-24T12:00:00Z') });
  seen = subscribe();
});
afterEach(() => {
  seen.stop();
  vi.useRealTimers();
});

/** A context's own fields, without the error object (which has its own redaction tests). */
const fieldsOf = (context: { error?: unknown; call?: unknown; batch?: unknown }) => JSON.stringify({ ...context, error: undefined, call: undefined, batch: undefined });

describe('integration-sdk:attempt', () => {
  it('one context per attempt: method, route template, server address; a retry shows attempt 2', async () => {
    const service = fakeService(envelope(500, 'INTERNAL'), json(200, ORDER));
    const outcome = settle(makeClient(service.fetch, { random: () => 0 }).orders.get('ord-77-private'));
    await vi.runAllTimersAsync();
    expect((await outcome).value).toEqual(ORDER);
    expect(seen.attempts.map(({ method, route, serverAddress, attempt, status }) => ({ method, route, serverAddress, attempt, status }))).toEqual([
      { method: 'GET', route: '/orders/{id}', serverAddress: 'platform.example.com', attempt: 1, status: 500 },
      { method: 'GET', route: '/orders/{id}', serverAddress: 'platform.example.com', attempt: 2, status: 200 },
    ]);
    expect(seen.attempts[0]!.error).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(seen.attempts.every((context) => typeof context.rateLimitWaitMs === 'number')).toBe(true);
    expect(seen.attempts[0]!.call).toBe(seen.calls[0]);
    for (const context of seen.attempts) expect(fieldsOf(context)).not.toContain('ord-77-private');
  });

  it('a 429 attempt shows status 429', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '1' }), json(200, HEALTH));
    const outcome = settle(makeClient(service.fetch).health());
    await vi.runAllTimersAsync();
    await outcome;
    expect(seen.attempts.map((context) => [context.route, context.attempt, context.status])).toEqual([
      ['/health', 1, 429],
      ['/health', 2, 200],
    ]);
  });

  it('no key, id, query value or body in any context', async () => {
    const service = fakeService(json(201, { entry: ENTRY, balance: 50 }), json(200, { customer: { id: 'c', name: 'Maria', phone: PHONE, external_id: null }, points: 1, program_id: 'p' }), json(200, {}));
    const client = makeClient(service.fetch);
    await client.loyalty.credit({ phone: PHONE, points: 50, idempotency_key: 'idem-private' });
    await client.loyalty.balance({ phone: PHONE });
    await client.request({ method: 'GET', path: '/orders/ord-88-private', query: { q: 'query-private' } });
    expect(seen.attempts.map((context) => context.route)).toEqual(['/loyalty/points', '/loyalty/balance', '/{path}']);
    const text = [...seen.calls, ...seen.attempts].map(fieldsOf).join('\n');
    for (const secret of [API_KEY, SECRET_PART, PHONE, '91234', 'idem-private', 'ord-88-private', 'query-private', 'Maria']) expect(text).not.toContain(secret);
  });
});

describe('integration-sdk:call', () => {
  it('one context per public call, named as users call it', async () => {
    const service = fakeService(json(200, HEALTH), json(200, { data: [] }), envelope(404, 'NOT_FOUND'));
    const client = makeClient(service.fetch, { maxRetries: 0 });
    await client.health();
    await client.webhooks.list();
    await client.orders.get('x').catch(() => {});
    expect(seen.calls.map((context) => context.operation)).toEqual(['health', 'webhooks.list', 'orders.get']);
    expect(seen.calls[2]!.error).toMatchObject({ code: 'NOT_FOUND' });
  });
});
