import { describe, expect, test, vi } from 'vitest';
import { ConfigurationError } from '../../src/errors/integration-error.ts';
import { createWebhookHandler, type SignedWebhook, type WebhookHandlerOptions } from 'integration-sdk/webhooks';
import { NOW, NOW_SECONDS, ORDER, ORDER_CREATED, SECRET, UNKNOWN_EVENT, deferred, delivery } from './support/deliveries.ts';

function post({ body, headers }: SignedWebhook): Request {
  return new Request('https://erp.example/webhooks', { method: 'POST', headers: { ...headers }, body });
}

function handlerWith(options: Partial<WebhookHandlerOptions> = {}) {
  const onEvent = vi.fn<WebhookHandlerOptions['onEvent']>(options.onEvent ?? (() => undefined));
  const handler = createWebhookHandler({ secret: SECRET, now: NOW, ...options, onEvent });
  return { handler, onEvent };
}

describe('createWebhookHandler (Fetch)', () => {
  test('a genuine delivery reaches onEvent and is answered 2xx only after onEvent resolved', async () => {
    const persisted = deferred();
    const { handler, onEvent } = handlerWith({ onEvent: () => persisted.promise });
    let answered = false;
    const answer = handler(post(delivery())).then((response) => {
      answered = true;
      return response;
    });
    await vi.waitFor(() => expect(onEvent).toHaveBeenCalledOnce());
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    persisted.resolve();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(onEvent.mock.calls[0]![0]).toMatchObject({ event: 'order.created', data: ORDER });
  });

  test('a delivery id already seen is answered 2xx without calling onEvent again', async () => {
    const seen = new Set<string>();
    const { handler, onEvent } = handlerWith({
      isDuplicate: async (deliveryId) => seen.has(deliveryId),
      onEvent: (event) => void seen.add(event.delivery_id),
    });
    const first = delivery();
    // A retry: same delivery id, new timestamp and signature.
    const retry = delivery(ORDER_CREATED, { timestamp: NOW_SECONDS + 60 });
    expect((await handler(post(first))).status).toBe(200);
    expect((await handler(post(retry))).status).toBe(200);
    expect(onEvent).toHaveBeenCalledOnce();
  });

  test('isDuplicate is asked with the delivery id before onEvent, and may be synchronous', async () => {
    const order: string[] = [];
    const { handler } = handlerWith({
      isDuplicate: (deliveryId) => {
        order.push(`isDuplicate ${deliveryId}`);
        return false;
      },
      onEvent: () => void order.push('onEvent'),
    });
    const signed = delivery();
    await handler(post(signed));
    expect(order).toEqual([`isDuplicate ${signed.headers['X-Service-Delivery-Id']}`, 'onEvent']);
  });

  test('a tampered delivery is answered 400 with the reason only, and onEvent is not called', async () => {
    const { handler, onEvent } = handlerWith();
    const signed = delivery();
    const response = await handler(post({ ...signed, body: signed.body.replace('"total":37.35', '"total":3.35') }));
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('signature_mismatch');
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('a stale delivery is answered 400 timestamp_out_of_tolerance', async () => {
    const { handler, onEvent } = handlerWith();
    const response = await handler(post(delivery(ORDER_CREATED, { timestamp: NOW_SECONDS - 301 })));
    expect([response.status, await response.text()]).toEqual([400, 'timestamp_out_of_tolerance']);
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('onEvent throwing is answered 500 so the service retries, without echoing the error', async () => {
    const onError = vi.fn();
    const failure = new Error(`could not save order for ${(ORDER as { customer: { name: string } }).customer.name}`);
    const { handler } = handlerWith({ onError, onEvent: async () => Promise.reject(failure) });
    const response = await handler(post(delivery()));
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('could not save');
    expect(onError).toHaveBeenCalledWith(failure);
  });

  test('isDuplicate throwing is answered 500 and onEvent is not called', async () => {
    const { handler, onEvent } = handlerWith({ isDuplicate: () => Promise.reject(new Error('db down')) });
    expect((await handler(post(delivery()))).status).toBe(500);
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('an unknown event is answered 2xx without calling onEvent', async () => {
    const isDuplicate = vi.fn(() => false);
    const { handler, onEvent } = handlerWith({ isDuplicate });
    const response = await handler(post(delivery(UNKNOWN_EVENT)));
    expect(response.status).toBe(200);
    expect(onEvent).not.toHaveBeenCalled();
    expect(isDuplicate).not.toHaveBeenCalled();
  });

  test('a method other than POST is answered 405 with Allow: POST', async () => {
    const { handler, onEvent } = handlerWith();
    const response = await handler(new Request('https://erp.example/webhooks', { method: 'GET' }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('a Request whose body was already read is answered 500, never verified against nothing', async () => {
    const { handler, onEvent } = handlerWith();
    const request = post(delivery());
    await request.text();
    expect((await handler(request)).status).toBe(500);
    expect(onEvent).not.toHaveBeenCalled();
  });

  test('a failing onError does not change the answer', async () => {
    const { handler } = handlerWith({ onError: () => { throw new Error('logger down'); } });
    expect((await handler(post({ ...delivery(), body: '{}' }))).status).toBe(400);
  });

  test('rotation: any of several secrets may sign', async () => {
    const { handler, onEvent } = handlerWith({ secret: ['whsec_new', SECRET] });
    expect((await handler(post(delivery()))).status).toBe(200);
    expect(onEvent).toHaveBeenCalledOnce();
  });

  test('a missing secret or a bad tolerance is refused when the handler is created', () => {
    expect(() => createWebhookHandler({ secret: '', onEvent: () => undefined })).toThrow(ConfigurationError);
    expect(() => createWebhookHandler({ secret: undefined as never, onEvent: () => undefined })).toThrow(/secret is empty or missing/);
    expect(() => createWebhookHandler({ secret: SECRET, toleranceSeconds: Number.NaN, onEvent: () => undefined })).toThrow(ConfigurationError);
  });

  test('options that would fail every delivery are refused when the handler is created', () => {
    expect(() => createWebhookHandler(null as never)).toThrow(ConfigurationError);
    expect(() => createWebhookHandler({ secret: SECRET } as never)).toThrow(/onEvent must be a function/);
    expect(() => createWebhookHandler({ secret: SECRET, onEvent: 'persist' as never })).toThrow(/onEvent must be a function/);
    expect(() => createWebhookHandler({ secret: SECRET, onEvent: () => undefined, isDuplicate: true as never })).toThrow(ConfigurationError);
  });
});
