// Loyalty writes: what a failed write tells its caller so that the repeat is safe (issue 14.2).
import { describe, expect, it } from 'vitest';
import { ConnectionError, IntegrationError, InternalServerError, type IntegrationClient } from '../../src/index.ts';
import { PHONE, envelope, fails, fakeService, makeClient, networkError } from '../support/fake-service.ts';

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
