import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { verifyWebhook } from 'integration-sdk/webhooks';
import { api, startReceiver } from './helpers.ts';

// The sandbox signs with its own node:crypto code (spec 6.2); the SDK verifies with its own.
// Two independent readings of the spec must agree on every event kind.
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

describe('sandbox deliveries pass the SDK verifier', () => {
  test('order.created, order.status_changed and webhook.test verify and parse', async () => {
    const receiver = await startReceiver();
    const sandbox: Sandbox = await createSandbox({ rate: false });
    cleanups.push(receiver.close, sandbox.close);
    const { id, secret } = (await api(sandbox)('POST', '/webhooks', { url: receiver.url, events: ['order.created', 'order.status_changed'] })).body;
    const order = sandbox.createOrder({ source_channel: 'marketplace' });
    sandbox.setOrderStatus(order.order_id, 'cancelled');
    await api(sandbox)('POST', `/webhooks/${id}/test`);
    await sandbox.idle();
    const events = receiver.received.map((r) => verifyWebhook(r.rawBody, r.headers, secret));
    expect(events.map((e) => e.event).sort()).toEqual(['order.created', 'order.status_changed', 'webhook.test']);
    for (const event of events) {
      if (event.event === 'order.created') expect(event.data.external_order_id).toBe(order.external_order_id);
      if (event.event === 'order.status_changed') expect(event.data.previous_status).toBe('confirmed');
    }
    expect(() => verifyWebhook(receiver.received[0]?.rawBody ?? '', receiver.received[0]?.headers ?? {}, 'whsec_other')).toThrow();
  });
});
