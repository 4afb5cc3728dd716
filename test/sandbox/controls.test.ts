import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOptions } from 'integration-sdk/sandbox';
import { api, expectedSignature, startReceiver } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox({ rate: false, ...options });
  cleanups.push(sandbox.close);
  return sandbox;
}

/** POST to a `/_sandbox` control over the socket. */
function control(sandbox: Sandbox, key: string | null = sandbox.keys.full) {
  return async (path: string, body?: unknown) => {
    const response = await fetch(`${sandbox.url}/_sandbox${path}`, {
      method: 'POST',
      headers: { ...(key === null ? {} : { 'x-api-key': key }), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as any };
  };
}

async function receiverEndpoint(sandbox: Sandbox, answer?: (n: number) => number | 'hang') {
  const receiver = await startReceiver(answer);
  cleanups.push(receiver.close);
  const created = await api(sandbox)('POST', '/webhooks', { url: receiver.url, events: ['order.created', 'order.status_changed'] });
  return { receiver, webhook: created.body as { id: string; secret: string } };
}

describe('the /_sandbox controls', () => {
  test('need the full key: none, another sandbox key or a wrong one answer 401', async () => {
    const sandbox = await start();
    expect((await control(sandbox, null)('/orders')).status).toBe(401);
    expect((await control(sandbox, sandbox.keys.oneStore)('/orders')).body.error).toMatchObject({ code: 'INVALID_API_KEY', message: expect.stringMatching(/full key/) });
    expect((await control(sandbox, `${sandbox.keys.full}x`)('/orders')).status).toBe(401);
    expect(sandbox.deliveries()).toEqual([]);
  });

  test('are not part of the API: /integration/v1/_sandbox/orders is 404, and the controls skip the feature flag and faults', async () => {
    const sandbox = await start({ faults: { rate: 1, seed: 1, kinds: ['error500'] } });
    expect((await api(sandbox)('POST', '/_sandbox/orders', {})).status).toBe(500); // the service itself is all faults
    sandbox.setFaults(null);
    expect((await api(sandbox)('POST', '/_sandbox/orders', {})).status).toBe(404);
    sandbox.setFaults({ rate: 1, seed: 1, kinds: ['error500'] });
    sandbox.setFeatureEnabled(false);
    expect((await control(sandbox)('/orders')).status).toBe(201);
  });

  test('POST /_sandbox/orders creates an order and emits order.created to every subscriber, listing the deliveries', async () => {
    const sandbox = await start();
    const { receiver, webhook } = await receiverEndpoint(sandbox);
    const created = await control(sandbox)('/orders', { store_id: sandbox.storeIds[0]?.toUpperCase() });
    expect(created.status).toBe(201);
    expect(created.body.order).toMatchObject({ display_number: '1001', store_id: sandbox.storeIds[0], status: 'confirmed' });
    expect(created.body.deliveries).toEqual([expect.objectContaining({ webhook_id: webhook.id, event: 'order.created', url: receiver.url })]);
    await sandbox.idle();
    expect(JSON.parse(receiver.received[0]?.rawBody ?? '{}').data.order_id).toBe(created.body.order.order_id);
  });

  test('POST /_sandbox/orders refuses a store that is not the sandbox\'s', async () => {
    const sandbox = await start();
    const refused = await control(sandbox)('/orders', { store_id: '00000000-0000-4000-8000-000000000000' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ path: 'store_id', message: expect.stringMatching(/not a store of this sandbox/) }]);
  });

  test('POST /_sandbox/orders/{id}/status emits order.status_changed once and answers the previous status', async () => {
    const sandbox = await start();
    const { receiver } = await receiverEndpoint(sandbox);
    const order = sandbox.createOrder();
    const changed = await control(sandbox)(`/orders/${order.order_id}/status`, { status: 'dispatched' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ previous_status: 'confirmed', order: { status: 'dispatched' }, deliveries: [{ event: 'order.status_changed' }] });
    const again = await control(sandbox)(`/orders/${order.order_id}/status`, { status: 'dispatched' });
    expect(again.body).toMatchObject({ previous_status: 'dispatched', deliveries: [] });
    await sandbox.idle();
    expect(receiver.received.map((r) => r.headers['x-service-event'])).toEqual(['order.created', 'order.status_changed']);
  });

  test('a status outside the known ones is 400 and an unknown order 404', async () => {
    const sandbox = await start();
    const order = sandbox.createOrder();
    expect((await control(sandbox)(`/orders/${order.order_id}/status`, { status: 'shipped' })).body.error.details).toEqual([{ path: 'status', message: expect.stringMatching(/one of pending, confirmed/) }]);
    expect((await control(sandbox)(`/orders/${order.order_id}/status`)).status).toBe(400);
    expect((await control(sandbox)('/orders/no-such-order/status', { status: 'cancelled' })).status).toBe(404);
  });

  test('POST /_sandbox/deliveries registers an endpoint for a new URL, answers its secret and the outcome of attempt 1', async () => {
    const sandbox = await start();
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const sent = await control(sandbox)('/deliveries', { url: receiver.url });
    expect(sent.status).toBe(200);
    expect(sent.body.webhook).toMatchObject({ url: receiver.url, registered: true, events: ['order.created', 'order.status_changed'], secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/) });
    expect(sent.body.delivery).toMatchObject({ event: 'order.created', status: 'delivered', attempt_count: 1, response_status: 200 });
    const [{ headers, rawBody }] = receiver.received as [typeof receiver.received[0]];
    expect(headers['x-service-signature-256']).toBe(expectedSignature(sent.body.webhook.secret, String(headers['x-service-timestamp']), rawBody));
    expect(JSON.parse(rawBody).data.order_id).toBe(sent.body.order_id);
    expect((await api(sandbox)('GET', '/webhooks')).body.data).toEqual([expect.objectContaining({ id: sent.body.webhook.id, url: receiver.url })]);
  });

  test('POST /_sandbox/deliveries to a registered URL signs with that endpoint\'s secret and sends to it alone', async () => {
    const sandbox = await start();
    const { receiver, webhook } = await receiverEndpoint(sandbox);
    const other = await receiverEndpoint(sandbox);
    const sent = await control(sandbox)('/deliveries', { url: receiver.url, event: 'webhook.test' });
    expect(sent.body).toMatchObject({ order_id: null, webhook: { id: webhook.id, secret: webhook.secret, registered: false }, delivery: { event: 'webhook.test', status: 'delivered' } });
    await sandbox.idle();
    expect(receiver.received).toHaveLength(1);
    expect(other.receiver.received).toHaveLength(0);
  });

  test('POST /_sandbox/deliveries reports a failed attempt 1 and the retry that follows', async () => {
    const sandbox = await start({ timeScale: 1 });
    const sent = await control(sandbox)('/deliveries', { url: 'http://127.0.0.1:9/down' });
    expect(sent.body.delivery).toMatchObject({ status: 'retrying', attempt_count: 1, response_status: null, last_error: expect.stringMatching(/connection failed/) });
    expect(Date.parse(sent.body.delivery.next_attempt_at) - Date.now()).toBeGreaterThan(50_000);
  });

  test('POST /_sandbox/deliveries checks its arguments: URL, event', async () => {
    const sandbox = await start();
    const refused = await control(sandbox)('/deliveries', { url: 'not a url', event: 'order.status_changed' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((d: { path: string }) => d.path)).toEqual(['event', 'url']);
    expect((await control(sandbox)('/deliveries', { url: 'ftp://127.0.0.1/x' })).body.error.code).toBe('SSRF_BLOCKED');
    expect(sandbox.deliveries()).toEqual([]);
  });
});
