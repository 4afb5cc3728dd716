import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import { createWebhookHandler, type WebhookHeaders } from 'integration-sdk/webhooks';
import { DELIVERY_ID, NOW, NOW_SECONDS, ORDER, ORDER_CREATED, SECRET, VERIFIERS, delivery, outcome } from './support/deliveries.ts';

const { body, headers } = delivery(ORDER_CREATED);
const customer = (ORDER as { customer: { name: string; phone: string; email: string } }).customer;
const signatureHex = headers['X-Service-Signature-256'].slice('sha256='.length);
const FORBIDDEN = [SECRET, signatureHex, customer.name, customer.phone, customer.email, body.slice(0, 40)];

function withHeaders(changes: Record<string, string>): WebhookHeaders {
  return { ...headers, ...changes };
}

const FAILURES: Array<[string, string | Uint8Array, WebhookHeaders, string | string[]]> = [
  ['missing_header', body, { 'X-Service-Timestamp': String(NOW_SECONDS) }, SECRET],
  ['invalid_timestamp', body, withHeaders({ 'X-Service-Timestamp': 'x' }), SECRET],
  ['timestamp_out_of_tolerance', body, withHeaders({ 'X-Service-Timestamp': String(NOW_SECONDS - 9999) }), SECRET],
  ['invalid_signature_format', body, withHeaders({ 'X-Service-Signature-256': `sha256=${signatureHex.toUpperCase()}` }), SECRET],
  ['signature_mismatch', body, headers, [`${SECRET}x`, SECRET.slice(1)]],
  ['signature_mismatch (parsed body)', body.replace('"', ' "'), headers, SECRET],
  ['header_mismatch', body, withHeaders({ 'X-Service-Delivery-Id': DELIVERY_ID.replace('e', 'f') }), SECRET],
];

describe.each(VERIFIERS)('errors of %s hold no secret, signature or body', (_name, verify) => {
  test.each(FAILURES)('%s', async (expected, rawBody, given, secret) => {
    const { error } = await outcome(() => verify(rawBody, given, secret, { now: NOW }));
    expect((error as { reason: string }).reason).toBe(expected.split(' ')[0]);
    const views = [(error as Error).message, JSON.stringify(error), inspect(error), inspect(error, { showHidden: true, depth: 5 }), String(error)];
    for (const view of views) for (const forbidden of FORBIDDEN) expect(view).not.toContain(forbidden);
  });

  test('invalid_payload for a known event names no value of the order', async () => {
    const broken = delivery({ event: 'order.created', data: { ...ORDER, totals: 'lots' } });
    const { error } = await outcome(() => verify(broken.body, broken.headers, SECRET, { now: NOW }));
    expect((error as { reason: string }).reason).toBe('invalid_payload');
    for (const view of [(error as Error).message, JSON.stringify(error), inspect(error)]) {
      for (const forbidden of [...FORBIDDEN, 'lots']) expect(view).not.toContain(forbidden);
    }
  });
});

test('the handler answers failures with the reason only and passes onError secret-free errors', async () => {
  const reported: unknown[] = [];
  const handler = createWebhookHandler({ secret: SECRET, now: NOW, onEvent: () => undefined, onError: (error) => reported.push(error) });
  const response = await handler(new Request('http://localhost/', { method: 'POST', headers, body: body.replace('37.35', '3.35') }));
  expect(response.status).toBe(400);
  expect(await response.text()).toBe('signature_mismatch');
  expect(reported).toHaveLength(1);
  for (const forbidden of FORBIDDEN) expect(inspect(reported[0])).not.toContain(forbidden);
});
