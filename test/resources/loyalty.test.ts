// Loyalty writes: what a failed write tells its caller so that the repeat is safe (issue 14.2).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, IntegrationError, InternalServerError, InvalidInputError, ResponseValidationError, TimeoutError, type IntegrationClient } from '../../src/index.ts';
import { PHONE, envelope, fails, fakeService, json, makeClient, networkError, settle } from '../support/fake-service.ts';

const writes: [string, (client: IntegrationClient, key?: string) => Promise<unknown>][] = [
  ['credit', (c, key) => c.loyalty.credit({ phone: PHONE, points: 50, ...(key ? { idempotency_key: key } : {}) })],
  ['debit', (c, key) => c.loyalty.debit({ phone: PHONE, points: 5, ...(key ? { idempotency_key: key } : {}) })],
  ['redeemCoupon', (c, key) => c.loyalty.redeemCoupon({ code: 'WELCOME10', phone: PHONE, store_id: 's1', ...(key ? { idempotency_key: key } : {}) })],
];

describe('every error of a loyalty write carries the idempotency_key it was sent with', () => {
  it.each(writes)('%s: a made key, on a dropped connection', async (_name, write) => {
    const service = fakeService(fails(networkError('ECONNRESET', 'read ECONNRESET')));
    const error = (await write(makeClient(service.fetch, { maxRetries: 0, randomUUID: () => 'made-key-1' })).catch((e: unknown) => e)) as IntegrationError & { idempotency_key?: string };
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.idempotency_key).toBe('made-key-1');
    expect((service.requests[0]!.body as { idempotency_key: string }).idempotency_key).toBe('made-key-1');
  });

  it.each(writes)('%s: the caller’s key, on a service error', async (_name, write) => {
    const service = fakeService(envelope(500, 'INTERNAL'));
    const error = (await write(makeClient(service.fetch, { maxRetries: 0 }), 'order-42').catch((e: unknown) => e)) as IntegrationError & { idempotency_key?: string };
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.idempotency_key).toBe('order-42');
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ idempotency_key: 'order-42' });
  });
});

describe('the key on errors after the request left (14.2)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(writes)('%s: a TimeoutError', async (_name, write) => {
    vi.useFakeTimers();
    const never = () => new Promise<Response>(() => {});
    const client = makeClient(fakeService(never).fetch, { maxRetries: 0, timeoutMs: 1000, randomUUID: () => 'made-key-2' });
    const outcome = settle(write(client));
    await vi.advanceTimersByTimeAsync(1000);
    const { error } = await outcome;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as IntegrationError).idempotency_key).toBe('made-key-2');
  });

  it.each(writes)('%s: a 2xx answer that does not match its schema', async (_name, write) => {
    const client = makeClient(fakeService(json(201, { unexpected: true })).fetch, { maxRetries: 0, randomUUID: () => 'made-key-3' });
    const error = await write(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as IntegrationError).idempotency_key).toBe('made-key-3');
  });
});

describe('an aborted loyalty write rejects with the key it sent (26.18)', () => {
  const abortable: [string, (client: IntegrationClient, signal: AbortSignal) => Promise<unknown>][] = [
    ['credit', (c, signal) => c.loyalty.credit({ phone: PHONE, points: 50 }, { signal })],
    ['debit', (c, signal) => c.loyalty.debit({ phone: PHONE, points: 5 }, { signal })],
    ['redeemCoupon', (c, signal) => c.loyalty.redeemCoupon({ code: 'WELCOME10', phone: PHONE, store_id: 's1' }, { signal })],
  ];
  /** Every request reaches the service and is never answered: the write may have been applied. */
  const unanswered = () => fakeService(() => new Promise<Response>(() => {}));
  /** Resolves once the service has received `count` requests. */
  const received = async (service: { requests: unknown[] }, count: number) => {
    while (service.requests.length < count) await new Promise((resolve) => setImmediate(resolve));
  };

  it.each(abortable)('%s: aborted while its request is out: an AbortError carrying the key, your reason as its cause', async (_name, write) => {
    const service = unanswered();
    const controller = new AbortController();
    const outcome = write(makeClient(service.fetch, { randomUUID: () => 'made-key-4' }), controller.signal).catch((e: unknown) => e);
    await received(service, 1);
    const reason = new Error('shutting down');
    controller.abort(reason);
    const error = (await outcome) as DOMException & { idempotency_key?: string };
    expect(error).toBeInstanceOf(DOMException);
    expect(error.name).toBe('AbortError');
    expect(error.cause).toBe(reason);
    expect(error.idempotency_key).toBe('made-key-4');
    expect((service.requests[0]!.body as { idempotency_key: string }).idempotency_key).toBe('made-key-4');
    // A cancellation is the caller's decision, not a failure to repeat blindly: no IntegrationError.
    expect(error).not.toBeInstanceOf(IntegrationError);
  });

  it('one signal aborting two credits: each error carries its own key; AbortSignal.timeout keeps its TimeoutError name', async () => {
    const service = unanswered();
    const controller = new AbortController();
    let made = 0;
    const client = makeClient(service.fetch, { randomUUID: () => `made-key-${(made += 1)}` });
    const first = client.loyalty.credit({ phone: PHONE, points: 1 }, { signal: controller.signal }).catch((e: unknown) => e);
    const second = client.loyalty.credit({ phone: PHONE, points: 2 }, { signal: controller.signal }).catch((e: unknown) => e);
    await received(service, 2);
    controller.abort();
    const errors = (await Promise.all([first, second])) as (DOMException & { idempotency_key?: string })[];
    expect(errors.map((error) => [error.name, error.idempotency_key])).toEqual([['AbortError', 'made-key-1'], ['AbortError', 'made-key-2']]);
    expect(errors[0]!.cause).toBe(controller.signal.reason);

    const timedOut = (await client.loyalty.credit({ phone: PHONE, points: 3, idempotency_key: 'order-7' }, { signal: AbortSignal.timeout(20) }).catch((e: unknown) => e)) as DOMException & { idempotency_key?: string };
    expect([timedOut.name, timedOut.idempotency_key]).toEqual(['TimeoutError', 'order-7']);
  });
});

describe('what a loyalty write checks is what it sends', () => {
  it.each([
    ['credit', (c: IntegrationClient, input: never) => c.loyalty.credit(input)],
    ['debit', (c: IntegrationClient, input: never) => c.loyalty.debit(input)],
  ])('%s: a points getter is read once', async (_name, write) => {
    let reads = 0;
    const input = {
      phone: PHONE,
      get points() {
        reads += 1;
        return reads === 1 ? 5 : -5;
      },
    };
    const service = fakeService(envelope(500, 'INTERNAL'));
    await write(makeClient(service.fetch, { maxRetries: 0 }), input as never).catch(() => {});
    expect((service.requests[0]!.body as { points: number }).points).toBe(5);
  });

  it('an idempotency_key getter cannot send a key other than the one checked and reported', async () => {
    let reads = 0;
    const input = {
      phone: PHONE,
      points: 5,
      get idempotency_key() {
        reads += 1;
        return reads === 1 ? 'checked-key' : 'x'.repeat(300);
      },
    };
    const service = fakeService(envelope(500, 'INTERNAL'));
    const error = (await makeClient(service.fetch, { maxRetries: 0 }).loyalty.credit(input).catch((e: unknown) => e)) as IntegrationError;
    expect(error).not.toBeInstanceOf(InvalidInputError);
    expect((service.requests[0]!.body as { idempotency_key: string }).idempotency_key).toBe('checked-key');
    expect(error.idempotency_key).toBe('checked-key');
  });
});
