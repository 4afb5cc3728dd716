import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createSandbox, type HostResolver, type Sandbox } from 'integration-sdk/sandbox';
import { WebhookDeliveryListSchema } from '../../src/schemas/webhooks.ts';
import { api, expectedSignature, ManualClock, startReceiver } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function onlyDeliveryId(sandbox: Sandbox): string {
  const all = sandbox.deliveries();
  expect(all).toHaveLength(1);
  return all[0]?.id ?? '';
}

async function setup(answer?: (n: number) => number | 'hang', options: Parameters<typeof createSandbox>[0] = {}, events = ['order.created', 'order.status_changed']) {
  const receiver = await startReceiver(answer);
  const sandbox: Sandbox = await createSandbox({ rate: false, ...options });
  cleanups.push(receiver.close, sandbox.close);
  const created = await api(sandbox)('POST', '/webhooks', { url: receiver.url, events });
  expect(created.status).toBe(201);
  return { sandbox, receiver, webhook: created.body as { id: string; secret: string } };
}

describe('signed deliveries to a real receiver', () => {
  test('order.created carries the headers of 6.1 and a signature of `<ts>.<raw body>`', async () => {
    const { sandbox, receiver, webhook } = await setup();
    const order = sandbox.createOrder();
    await sandbox.idle();
    expect(receiver.received).toHaveLength(1);
    const [{ headers, rawBody }] = receiver.received as [typeof receiver.received[0]];
    const timestamp = String(headers['x-service-timestamp']);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-service-event']).toBe('order.created');
    expect(timestamp).toMatch(/^\d{10}$/);
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(5);
    expect(headers['x-service-signature-256']).toBe(expectedSignature(webhook.secret, timestamp, rawBody));
    expect(headers['x-service-signature-256']).not.toBe(expectedSignature('whsec_wrong', timestamp, rawBody));
    const body = JSON.parse(rawBody);
    expect(Object.keys(body)).toEqual(['event', 'delivery_id', 'ts', 'data']);
    expect(body).toMatchObject({ event: 'order.created', delivery_id: headers['x-service-delivery-id'], ts: Number(timestamp) });
    expect(body.data.order_id).toBe(order.order_id);
    expect(body.data.items).toHaveLength(1);
  });

  test('order.status_changed carries the summary; setting the same status again emits nothing', async () => {
    const { sandbox, receiver } = await setup();
    const order = sandbox.createOrder();
    sandbox.setOrderStatus(order.order_id, 'dispatched');
    sandbox.setOrderStatus(order.order_id, 'dispatched');
    await sandbox.idle();
    const changed = receiver.received.map((r) => JSON.parse(r.rawBody)).filter((b) => b.event === 'order.status_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0].data).toEqual({
      order_id: order.order_id, display_number: order.display_number, external_order_id: null, previous_status: 'confirmed', status: 'dispatched', store_id: order.store_id,
    });
  });

  test('an endpoint gets only its subscribed events and only orders of its key\'s stores', async () => {
    const { sandbox, receiver } = await setup(undefined, {}, ['order.status_changed']);
    const other = await startReceiver();
    cleanups.push(other.close);
    await api(sandbox, sandbox.keys.oneStore)('POST', '/webhooks', { url: other.url, events: ['order.created'] });
    sandbox.createOrder({ store_id: sandbox.storeIds[1] });
    sandbox.createOrder({ store_id: sandbox.storeIds[0] });
    await sandbox.idle();
    expect(receiver.received).toHaveLength(0);
    expect(other.received.map((r) => JSON.parse(r.rawBody).data.store_id)).toEqual([sandbox.storeIds[0]]);
  });

  test('POST /webhooks/{id}/test answers 202 with the delivery id of a webhook.test event', async () => {
    const { sandbox, receiver, webhook } = await setup();
    const answer = await api(sandbox)('POST', `/webhooks/${webhook.id}/test`);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ delivery_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const done = await sandbox.waitForDelivery(answer.body.delivery_id);
    expect(done).toMatchObject({ status: 'delivered', attempt_count: 1, response_status: 200, event: 'webhook.test' });
    expect(JSON.parse(receiver.received[0]?.rawBody ?? '{}').data).toEqual({ webhook_id: webhook.id, message: expect.any(String) });
  });
});

describe('retries (spec 6.4) driven by an injected clock', () => {
  test('fails 3 times, then is delivered on attempt 4: same id, new timestamp and signature, counter back to 0', async () => {
    const clock = new ManualClock();
    const { sandbox, receiver, webhook } = await setup((n) => (n <= 3 ? 500 : 200), { clock });
    sandbox.createOrder();
    const id = onlyDeliveryId(sandbox);
    const schedule = [60_000, 300_000, 1_800_000];
    for (const [i, wait] of schedule.entries()) {
      const retrying = await sandbox.waitForDelivery(id, (d) => d.attempt_count === i + 1 && d.status === 'retrying');
      expect(retrying).toMatchObject({ response_status: 500, last_error: expect.stringContaining('500'), next_attempt_at: new Date(clock.now() + wait).toISOString() });
      const failures = (await api(sandbox)('GET', '/webhooks')).body.data[0].consecutive_failures;
      expect(failures).toBe(i + 1);
      clock.advance(wait - 1);
      expect(receiver.received).toHaveLength(i + 1);
      clock.advance(1);
    }
    const delivered = await sandbox.waitForDelivery(id);
    expect(delivered).toMatchObject({ status: 'delivered', attempt_count: 4, response_status: 200, next_attempt_at: null });
    expect((await api(sandbox)('GET', '/webhooks')).body.data[0].consecutive_failures).toBe(0);
    expect(new Set(receiver.received.map((r) => r.headers['x-service-delivery-id']))).toEqual(new Set([id]));
    const stamps = receiver.received.map((r) => String(r.headers['x-service-timestamp']));
    expect(new Set(stamps).size).toBe(4);
    const signatures = receiver.received.map((r) => r.headers['x-service-signature-256']);
    expect(new Set(signatures).size).toBe(4);
    receiver.received.forEach((r, i) => expect(r.headers['x-service-signature-256']).toBe(expectedSignature(webhook.secret, stamps[i] ?? '', r.rawBody)));
    const log = await api(sandbox)('GET', `/webhooks/${webhook.id}/deliveries`);
    expect(WebhookDeliveryListSchema.safeParse(log.body).success).toBe(true);
    expect(Object.keys(log.body.data[0]).sort()).toEqual(['attempt_count', 'created_at', 'event', 'id', 'last_error', 'next_attempt_at', 'response_status', 'status']);
  });

  test('a receiver that never recovers is dead after 6 attempts (tiny timeScale, event-driven wait)', async () => {
    const { sandbox, receiver, webhook } = await setup(() => 503, { timeScale: 0.00001 });
    sandbox.createOrder();
    await sandbox.idle();
    const [dead] = sandbox.deliveries();
    expect(dead).toMatchObject({ status: 'dead', attempt_count: 6, response_status: 503, next_attempt_at: null });
    expect(receiver.received).toHaveLength(6);
    expect((await api(sandbox)('GET', '/webhooks')).body.data[0].consecutive_failures).toBe(6);
    // Deleting the endpoint forgets its deliveries.
    await api(sandbox)('DELETE', `/webhooks/${webhook.id}`);
    expect(sandbox.deliveries()).toEqual([]);
  });

  test('a test delivery that succeeds resets consecutive_failures', async () => {
    const { sandbox, webhook } = await setup((n) => (n === 1 ? 500 : 200), { clock: new ManualClock() });
    sandbox.createOrder();
    const id = onlyDeliveryId(sandbox);
    await sandbox.waitForDelivery(id, (d) => d.status === 'retrying');
    expect((await api(sandbox)('GET', '/webhooks')).body.data[0].consecutive_failures).toBe(1);
    const { delivery_id } = (await api(sandbox)('POST', `/webhooks/${webhook.id}/test`)).body;
    await sandbox.waitForDelivery(delivery_id);
    expect((await api(sandbox)('GET', '/webhooks')).body.data[0].consecutive_failures).toBe(0);
    const log = (await api(sandbox)('GET', `/webhooks/${webhook.id}/deliveries?limit=1`)).body.data;
    expect(log.map((d: { event: string }) => d.event)).toEqual(['webhook.test']);
  });

  test('a 3xx is a failure and its Location is not followed', async () => {
    const target = await startReceiver();
    cleanups.push(target.close);
    const redirecting = await startReceiver(() => 302, { location: target.url });
    cleanups.push(redirecting.close);
    const clock = new ManualClock();
    const sandbox = await createSandbox({ rate: false, clock });
    cleanups.push(sandbox.close);
    await api(sandbox)('POST', '/webhooks', { url: redirecting.url, events: ['order.created'] });
    sandbox.createOrder();
    const id = onlyDeliveryId(sandbox);
    const failed = await sandbox.waitForDelivery(id, (d) => d.status === 'retrying');
    expect(failed).toMatchObject({ response_status: 302, last_error: expect.stringContaining('redirect') });
    expect(target.received).toHaveLength(0);
  });

  test('no complete answer within the limit is a timeout failure', async () => {
    const clock = new ManualClock();
    const { sandbox, receiver } = await setup(() => 'hang', { deliveryTimeoutMs: 10_000, clock });
    sandbox.createOrder();
    const id = onlyDeliveryId(sandbox);
    await receiver.waitForRequests(1);
    clock.advance(9_999);
    expect(sandbox.deliveries()[0]?.status).toBe('pending');
    clock.advance(1);
    const failed = await sandbox.waitForDelivery(id, (d) => d.status === 'retrying');
    expect(failed).toMatchObject({ attempt_count: 1, response_status: null, last_error: expect.stringContaining('timeout') });
  });

  test('a 2xx with a huge body is delivered: the body is read up to 256 KB and discarded', async () => {
    const huge = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 'x');
        // Never ends on its own: only the 256 KB cap lets the attempt finish before the limit.
        const timer = setInterval(() => res.write(chunk), 1);
        res.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((resolve) => huge.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => {
      huge.closeAllConnections();
      huge.close(() => resolve());
    }));
    const sandbox = await createSandbox({ rate: false, clock: new ManualClock() });
    cleanups.push(sandbox.close);
    await api(sandbox)('POST', '/webhooks', { url: `http://127.0.0.1:${(huge.address() as AddressInfo).port}/`, events: ['order.created'] });
    sandbox.createOrder();
    expect(await sandbox.waitForDelivery(onlyDeliveryId(sandbox))).toMatchObject({ status: 'delivered', response_status: 200 });
  });

  test('close() cancels every pending retry timer', async () => {
    const clock = new ManualClock();
    const { sandbox, receiver } = await setup(() => 500, { clock });
    sandbox.createOrder();
    const id = onlyDeliveryId(sandbox);
    await sandbox.waitForDelivery(id, (d) => d.status === 'retrying');
    expect(clock.pendingTimers).toBe(1);
    await sandbox.close();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(100_000_000);
    expect(receiver.received).toHaveLength(1);
  });

  test('close() right after an emission sends nothing and leaves no answer-limit timer', async () => {
    const clock = new ManualClock();
    const { sandbox, receiver } = await setup(() => 'hang', { clock });
    sandbox.createOrder(); // attempt 1 has started and is still checking the receiver URL
    await sandbox.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(clock.pendingTimers).toBe(0);
    expect(receiver.received).toHaveLength(0);
  });

  test('hundreds of deliveries in flight add no listener per attempt (no MaxListenersExceededWarning)', async () => {
    // Node 20 warns at the 11th 'abort' listener of one AbortSignal; Node 24 no longer does, so
    // the peak number of listeners on any one signal is measured as well.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    const listening = new WeakMap<EventTarget, number>();
    let peak = 0;
    const count = (target: EventTarget, type: string, by: number) => {
      if (type !== 'abort' || !(target instanceof AbortSignal)) return;
      const now = (listening.get(target) ?? 0) + by;
      listening.set(target, now);
      peak = Math.max(peak, now);
    };
    const { addEventListener, removeEventListener } = EventTarget.prototype;
    const add = vi.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (this: EventTarget, ...args) {
      count(this, args[0], 1);
      return addEventListener.apply(this, args);
    });
    const remove = vi.spyOn(EventTarget.prototype, 'removeEventListener').mockImplementation(function (this: EventTarget, ...args) {
      count(this, args[0], -1);
      return removeEventListener.apply(this, args);
    });
    cleanups.push(async () => {
      process.off('warning', onWarning);
      add.mockRestore();
      remove.mockRestore();
    });
    const receiver = await startReceiver(() => 'hang');
    const sandbox = await createSandbox({ rate: false });
    cleanups.push(receiver.close, sandbox.close);
    await api(sandbox)('POST', '/webhooks', { url: receiver.url, events: ['order.created'] });
    for (let i = 0; i < 300; i += 1) sandbox.createOrder();
    await receiver.waitForRequests(300); // 300 attempts in flight at once
    await sandbox.close(); // every attempt in flight is cancelled
    await new Promise((resolve) => setImmediate(resolve)); // process.emitWarning reports on the next tick
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
    expect(peak).toBeLessThanOrEqual(1);
    expect(sandbox.deliveries().every((d) => d.status === 'pending' && d.attempt_count === 1)).toBe(true);
  });

  test('with the production check, a host that turns private is blocked at delivery time', async () => {
    let address = '93.184.216.34';
    const resolveHost: HostResolver = async () => [address];
    const sandbox = await createSandbox({ rate: false, allowInsecureReceivers: false, resolveHost, clock: new ManualClock() });
    cleanups.push(sandbox.close);
    expect((await api(sandbox)('POST', '/webhooks', { url: 'https://erp.example.com/hooks', events: ['order.created'] })).status).toBe(201);
    address = '10.0.0.7';
    sandbox.createOrder();
    const id = onlyDeliveryId(sandbox);
    const failed = await sandbox.waitForDelivery(id, (d) => d.status === 'retrying');
    expect(failed).toMatchObject({ response_status: null, last_error: expect.stringMatching(/anti-SSRF.*10\.0\.0\.7/) });
  });
});
