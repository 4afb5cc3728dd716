/**
 * Signed deliveries from the sandbox to real receivers on node:http 127.0.0.1:0 (issue 4 part 7,
 * items 5 and 6): verified by `createWebhookHandler` and by `verifyWebhook` directly; the retry
 * schedule of spec 6.4 driven by an injected clock, waits event-driven (never fixed sleeps).
 */
import { describe, expect, test } from 'vitest';
import { createWebhookHandler, verifyWebhook, WebhookVerificationError, type KnownWebhookEvent, type WebhookEvent } from 'integration-sdk/webhooks';
import type { DeliveryView } from 'integration-sdk/sandbox';
import { clientFor, ManualClock, rawBodyOf, rejectionOf, startReceiver, startSandbox } from './helpers.ts';

const HOOK_EVENTS = ['order.created', 'order.status_changed'] as const;

describe('signed deliveries accepted by the SDK verifiers', () => {
  test('a createWebhookHandler receiver gets order.created (full order), order.status_changed and webhook.test', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const events: KnownWebhookEvent[] = [];
    let handler: ReturnType<typeof createWebhookHandler> | undefined;
    const receiver = await startReceiver((req, res) => handler?.node(req, res));
    const endpoint = await client.webhooks.create({ url: receiver.url, events: [...HOOK_EVENTS] });
    handler = createWebhookHandler({ secret: endpoint.secret, onEvent: (event) => void events.push(event) });

    const order = sandbox.createOrder({ source_channel: 'marketplace', items: [{ external_id: 'SKU-1002', quantity: 1.5 }, { external_id: 'SKU-1003', quantity: 6 }] });
    await sandbox.idle();
    sandbox.setOrderStatus(order.order_id, 'dispatched');
    await sandbox.idle();
    const { delivery_id: testId } = await client.webhooks.test(endpoint.id);
    await sandbox.idle();

    expect(events.map((e) => e.event)).toEqual(['order.created', 'order.status_changed', 'webhook.test']);
    const [created, changed, ping] = events as [KnownWebhookEvent, KnownWebhookEvent, KnownWebhookEvent];
    expect(created.data).toEqual(order);
    expect(changed.data).toEqual({
      order_id: order.order_id, display_number: order.display_number, external_order_id: order.external_order_id,
      previous_status: 'confirmed', status: 'dispatched', store_id: order.store_id,
    });
    expect(ping).toMatchObject({ delivery_id: testId, data: { webhook_id: endpoint.id, message: expect.any(String) } });
    // Each event's delivery_id is the header the service sent, and every answer was 200.
    expect(receiver.received.map((r) => [r.headers['x-service-event'], r.headers['x-service-delivery-id'], r.status])).toEqual(
      events.map((e) => [e.event, e.delivery_id, 200]),
    );

    const log = await client.webhooks.deliveries(endpoint.id);
    expect(log.map((d) => [d.event, d.status, d.attempt_count, d.response_status, d.last_error])).toEqual([
      ['webhook.test', 'delivered', 1, 200, null],
      ['order.status_changed', 'delivered', 1, 200, null],
      ['order.created', 'delivered', 1, 200, null],
    ]);
    expect((await client.webhooks.list())[0]?.consecutive_failures).toBe(0);
  });

  test('a receiver calling verifyWebhook directly on the raw bytes', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    let secret = '';
    const verified: WebhookEvent[] = [];
    const raw: Array<{ body: Buffer; headers: Record<string, string | string[] | undefined> }> = [];
    const receiver = await startReceiver(async (req, res) => {
      const body = await rawBodyOf(req);
      raw.push({ body, headers: req.headers });
      try {
        verified.push(verifyWebhook(body, req.headers, secret));
        res.writeHead(204).end();
      } catch (error) {
        res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
      }
    });
    ({ secret } = await client.webhooks.create({ url: receiver.url, events: ['order.created'] }));

    const order = sandbox.createOrder({ store_id: sandbox.storeIds[2], customer: { name: 'Ana Costa', phone: '+551181234567' } });
    await sandbox.idle();
    expect(verified).toHaveLength(1);
    expect(verified[0]).toEqual({ event: 'order.created', delivery_id: raw[0]?.headers['x-service-delivery-id'], ts: Number(raw[0]?.headers['x-service-timestamp']), data: order });
    expect(receiver.received.map((r) => r.status)).toEqual([204]);

    // The same bytes fail with another secret, and once the 5-minute window has passed.
    const { body, headers } = raw[0] as (typeof raw)[0];
    const wrong = await rejectionOf(Promise.resolve().then(() => verifyWebhook(body, headers, `whsec_${'0'.repeat(64)}`)));
    expect(wrong).toMatchObject({ reason: 'signature_mismatch' });
    const late = await rejectionOf(Promise.resolve().then(() => verifyWebhook(body, headers, secret, { now: (Number(headers['x-service-timestamp']) + 301) * 1000 })));
    expect(late).toMatchObject({ reason: 'timestamp_out_of_tolerance' });
    // Re-serialised JSON is not the signed bytes.
    const reserialised = JSON.stringify(JSON.parse(body.toString('utf8')), null, 1);
    expect(await rejectionOf(Promise.resolve().then(() => verifyWebhook(reserialised, headers, secret)))).toMatchObject({ reason: 'signature_mismatch' });
  });
});

describe('retries (spec 6.4) on an injected clock', () => {
  /** Waits until attempt `n` has failed and the next is scheduled. */
  const failedAttempt = (n: number) => (d: DeliveryView) => d.attempt_count === n && d.status === 'retrying';

  test('a receiver failing 3 times recovers on attempt 4: same delivery id, new timestamp and signature, counter back to 0', async () => {
    const clock = new ManualClock();
    const sandbox = await startSandbox({ clock });
    const { client } = clientFor(sandbox);
    const persisted = new Set<string>();
    const calls: string[] = [];
    let secret = '';
    // The receiver shares the sandbox's clock; onEvent fails (500) until its fourth call.
    const receiver = await startReceiver((req, res) =>
      createWebhookHandler({
        secret,
        now: clock.now(),
        isDuplicate: (id) => persisted.has(id),
        onEvent: (event) => {
          calls.push(event.delivery_id);
          if (calls.length <= 3) throw new Error('database unavailable');
          persisted.add(event.delivery_id);
        },
      }).node(req, res),
    );
    const endpoint = await client.webhooks.create({ url: receiver.url, events: [...HOOK_EVENTS] });
    secret = endpoint.secret;

    const start = clock.now();
    sandbox.createOrder();
    const [delivery] = sandbox.deliveries();
    const id = delivery?.id as string;
    let view = await sandbox.waitForDelivery(id, failedAttempt(1));
    expect(view).toMatchObject({ response_status: 500, last_error: expect.any(String), next_attempt_at: new Date(start + 60_000).toISOString() });
    expect((await client.webhooks.list())[0]?.consecutive_failures).toBe(1);

    // Not a millisecond early.
    clock.advance(59_999);
    expect(sandbox.deliveries()[0]?.attempt_count).toBe(1);
    clock.advance(1);
    view = await sandbox.waitForDelivery(id, failedAttempt(2));
    expect(view.next_attempt_at).toBe(new Date(start + 360_000).toISOString());
    clock.advance(300_000);
    view = await sandbox.waitForDelivery(id, failedAttempt(3));
    expect(view.next_attempt_at).toBe(new Date(start + 2_160_000).toISOString());
    expect((await client.webhooks.list())[0]?.consecutive_failures).toBe(3);
    clock.advance(1_800_000);
    view = await sandbox.waitForDelivery(id);

    expect(view).toMatchObject({ status: 'delivered', attempt_count: 4, response_status: 200, next_attempt_at: null });
    expect((await client.webhooks.list())[0]?.consecutive_failures).toBe(0);
    expect((await client.webhooks.deliveries(endpoint.id))[0]).toMatchObject({ id, status: 'delivered', attempt_count: 4, response_status: 200 });

    // Every attempt was verified (onEvent ran 4 times) and carried the same delivery id, while the
    // timestamp (the clock's, in epoch seconds) and the signature were new each time.
    expect(calls).toEqual([id, id, id, id]);
    expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(receiver.received.map((r) => r.headers['x-service-delivery-id'])).toEqual([id, id, id, id]);
    expect(receiver.received.map((r) => Number(r.headers['x-service-timestamp']) - start / 1000)).toEqual([0, 60, 360, 2160]);
    expect(new Set(receiver.received.map((r) => r.headers['x-service-signature-256'])).size).toBe(4);
    expect(persisted).toEqual(new Set([id]));
    expect(clock.pendingTimers).toBe(0);
  });

  test('a receiver that never recovers: dead after 6 attempts on the schedule, and no 7th', async () => {
    const clock = new ManualClock();
    const sandbox = await startSandbox({ clock });
    const { client } = clientFor(sandbox);
    // Verifies with a secret that is not the endpoint's: every delivery is answered 400.
    const handler = createWebhookHandler({ secret: `whsec_${'ab'.repeat(32)}`, onEvent: () => {} });
    const receiver = await startReceiver((req, res) => handler.node(req, res));
    const endpoint = await client.webhooks.create({ url: receiver.url, events: ['order.status_changed'] });

    const order = sandbox.createOrder();
    sandbox.setOrderStatus(order.order_id, 'cancelled');
    const [delivery] = sandbox.deliveries({ webhookId: endpoint.id });
    expect(delivery?.event).toBe('order.status_changed');
    const id = delivery?.id as string;

    const gaps: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const view = await sandbox.waitForDelivery(id, failedAttempt(attempt));
      const gap = Date.parse(view.next_attempt_at as string) - clock.now();
      gaps.push(gap / 1000);
      clock.advance(gap);
    }
    const dead = await sandbox.waitForDelivery(id);
    expect(gaps).toEqual([60, 300, 1800, 7200, 43200]);
    expect(dead).toMatchObject({ status: 'dead', attempt_count: 6, response_status: 400, next_attempt_at: null, last_error: expect.any(String) });
    expect(receiver.received.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400]);

    // Terminal: nothing is scheduled, and a week later there has been no 7th attempt.
    expect(clock.pendingTimers).toBe(0);
    clock.advance(7 * 24 * 3600 * 1000);
    await sandbox.idle();
    expect(receiver.received).toHaveLength(6);
    expect(await client.webhooks.deliveries(endpoint.id)).toEqual([expect.objectContaining({ id, status: 'dead', attempt_count: 6 })]);
    expect((await client.webhooks.list())[0]?.consecutive_failures).toBe(6);
  });
});
