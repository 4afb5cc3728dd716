// Signed deliveries and temp SQLite files for the inbox tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signWebhook } from '../../src/webhooks/index.ts';
import { ORDER } from '../support/fake-service.ts';

export const SECRET = 'whsec_inbox_tests';

export function tempDir(): { path: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-'));
  return { path: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function orderCreated(orderId: string, ts: number, deliveryId = `d-created-${orderId}`) {
  return signWebhook({ payload: { event: 'order.created', data: { ...ORDER, order_id: orderId } }, secret: SECRET, timestamp: ts, deliveryId });
}

export function statusChanged(orderId: string, ts: number, status: string, deliveryId = `d-${status}-${orderId}`) {
  const data = { order_id: orderId, display_number: '1', external_order_id: null, previous_status: 'confirmed', status, store_id: ORDER.store_id };
  return signWebhook({ payload: { event: 'order.status_changed', data }, secret: SECRET, timestamp: ts, deliveryId });
}

export function request({ body, headers }: { body: string; headers: Record<string, string> }): Request {
  return new Request('http://inbox.test/webhooks', { method: 'POST', headers, body });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
