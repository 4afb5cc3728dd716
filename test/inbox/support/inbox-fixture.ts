import type { Clock } from '../../../src/clock.ts';
import { createInbox, type Inbox, type InboxOptions } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { signWebhook, type WebhookPayload } from 'integration-sdk/webhooks';
import { ManualClock } from '../../support/manual-clock.ts';
import { ORDER } from '../../webhooks/support/deliveries.ts';
import { tempDir } from './temp-dir.ts';

export const SECRET = 'whsec_inbox_test_0123456789abcdef';
export { ORDER };

/** A manual clock in the shape of src/clock.ts's Clock; time moves only on `advance`. */
export function manualClock(): { clock: Clock; manual: ManualClock } {
  const manual = new ManualClock();
  return {
    manual,
    clock: {
      now: () => manual.now(),
      setTimeout(callback, ms) {
        const handle = manual.setTimeout(callback, ms);
        return () => manual.clearTimeout(handle);
      },
    },
  };
}

/** An inbox on a fresh SQLite file, and its teardown. */
export function sqliteInbox(options: Partial<InboxOptions> = {}): { inbox: Inbox; path: string; dispose(): Promise<void> } {
  const dir = tempDir('inbox');
  const path = `${dir.path}/inbox.db`;
  const inbox = createInbox({ secret: SECRET, store: sqliteStore({ path }), ...options });
  return {
    inbox,
    path,
    async dispose() {
      await inbox.close();
      dir.remove();
    },
  };
}

let sequence = 0;
/** A genuine signed delivery as a Fetch request. */
export function deliveryRequest(
  payload: WebhookPayload,
  options: { nowMs: number; deliveryId?: string; secret?: string; ts?: number } = { nowMs: Date.now() },
): Request {
  const deliveryId = options.deliveryId ?? `9d3a1c52-0000-4000-8000-${String(++sequence).padStart(12, '0')}`;
  const { body, headers } = signWebhook({
    payload,
    secret: options.secret ?? SECRET,
    timestamp: options.ts ?? Math.floor(options.nowMs / 1000),
    deliveryId,
  });
  return new Request('http://inbox.test/webhooks', { method: 'POST', headers, body });
}

export const orderCreated = (orderId = ORDER.order_id as string): WebhookPayload => ({ event: 'order.created', data: { ...ORDER, order_id: orderId } });
export const statusChanged = (orderId: string, status = 'cancelled'): WebhookPayload => ({
  event: 'order.status_changed',
  data: {
    order_id: orderId,
    display_number: '68341',
    external_order_id: null,
    previous_status: 'confirmed',
    status,
    store_id: '5a702cfa-93ea-4c4e-98f3-3418f3d4e711',
  },
});
