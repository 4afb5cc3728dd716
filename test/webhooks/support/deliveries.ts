import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhook, verifyWebhookAsync, type SignedWebhook, type WebhookPayload } from 'integration-sdk/webhooks';
import { vectors, bodyBytes } from './vectors.ts';

export const SECRET = 'whsec_test_0123456789abcdefghijklmnop';
/** A fixed clock (epoch seconds) for every test: no test depends on the real time. */
export const NOW_SECONDS = 1_795_002_201;
export const NOW = new Date(NOW_SECONDS * 1000);
export const DELIVERY_ID = 'eb8ac8ce-8a24-4e6b-b313-8131c541013d';

const firstVector = vectors.find((vector) => vector.expect.valid && vector.expect.event === 'order.created');
/** The full order of the shared vectors (it holds personal data: the tests check it never leaks). */
export const ORDER = (JSON.parse(bodyBytes(firstVector!).toString('utf8')) as { data: Record<string, unknown> }).data;

export const ORDER_CREATED: WebhookPayload = { event: 'order.created', data: ORDER };
export const STATUS_CHANGED: WebhookPayload = {
  event: 'order.status_changed',
  data: {
    order_id: '678a5aa3-3b6f-4507-8c5f-e8f8dc3bf364',
    display_number: '68341',
    external_order_id: null,
    previous_status: 'confirmed',
    status: 'cancelled',
    store_id: '5a702cfa-93ea-4c4e-98f3-3418f3d4e711',
  },
};
export const UNKNOWN_EVENT: WebhookPayload = { event: 'stock.changed', data: { external_id: 'SKU-1', stock_quantity: 3.125 } };

/** A genuine delivery signed at the fixed clock. */
export function delivery(payload: WebhookPayload = ORDER_CREATED, overrides: { timestamp?: number; secret?: string } = {}): SignedWebhook {
  return signWebhook({
    payload,
    secret: overrides.secret ?? SECRET,
    timestamp: overrides.timestamp ?? NOW_SECONDS,
    deliveryId: DELIVERY_ID,
  });
}

/** Signs arbitrary bytes as the service would, independently of the SDK. */
export function signRaw(body: Uint8Array, timestamp: string, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

type Verify = (...args: Parameters<typeof verifyWebhook>) => ReturnType<typeof verifyWebhook> | ReturnType<typeof verifyWebhookAsync>;

/** Both verifiers, for `describe.each`: every rule must hold for each. */
export const VERIFIERS: Array<[string, Verify]> = [
  ['verifyWebhook', verifyWebhook],
  ['verifyWebhookAsync', verifyWebhookAsync],
];

/** The outcome of a verification, whichever verifier ran: the event, or the error it threw. */
export async function outcome(run: () => unknown): Promise<{ event?: { event: string; data: unknown }; error?: unknown }> {
  try {
    return { event: (await run()) as { event: string; data: unknown } };
  } catch (error) {
    return { error };
  }
}

/** The `reason` of a rejected verification, or `'valid'`. */
export async function reasonOf(run: () => unknown): Promise<string> {
  const result = await outcome(run);
  if (result.error === undefined) return 'valid';
  return (result.error as { reason?: string }).reason ?? `threw ${String(result.error)}`;
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
