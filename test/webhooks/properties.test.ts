import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { signWebhook, WebhookVerificationError } from 'integration-sdk/webhooks';
import { DELIVERY_ID, NOW, NOW_SECONDS, ORDER_CREATED, SECRET, STATUS_CHANGED, VERIFIERS, delivery, outcome, signRaw } from './support/deliveries.ts';

const encoder = new TextEncoder();
const KNOWN = new Set(['order.created', 'order.status_changed', 'webhook.test']);
const RUNS = { numRuns: 150 };

function flipByte(text: string, index: number, mask: number): string {
  const bytes = encoder.encode(text);
  bytes[index % bytes.length]! ^= mask;
  return new TextDecoder('latin1').decode(bytes);
}

async function isRejected(run: () => unknown): Promise<boolean> {
  return (await outcome(run)).error instanceof WebhookVerificationError;
}

describe.each(VERIFIERS)('properties of %s', (_name, verify) => {
  const { body, headers } = delivery(ORDER_CREATED);
  const bytes = encoder.encode(body);
  const byteFlip = fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 }));

  test('flipping any single byte of the body is rejected as signature_mismatch', async () => {
    await fc.assert(
      fc.asyncProperty(byteFlip, async ([index, mask]) => {
        const tampered = Uint8Array.from(bytes);
        tampered[index % tampered.length]! ^= mask;
        const { error } = await outcome(() => verify(tampered, headers, SECRET, { now: NOW }));
        expect((error as WebhookVerificationError).reason).toBe('signature_mismatch');
      }),
      RUNS,
    );
  });

  test('flipping any single byte of the timestamp or the signature header is rejected', async () => {
    const header = fc.constantFrom('X-Service-Timestamp', 'X-Service-Signature-256' as const);
    await fc.assert(
      fc.asyncProperty(header, byteFlip.filter(([, mask]) => mask < 128), async (name, [index, mask]) => {
        const tampered = { ...headers, [name]: flipByte(headers[name as keyof typeof headers], index, mask) };
        expect(await isRejected(() => verify(body, tampered, SECRET, { now: NOW }))).toBe(true);
      }),
      RUNS,
    );
  });

  test('signWebhook output always verifies, whatever the secret, event, data, time and id', async () => {
    const unknownEvent = fc.record({ event: fc.string({ unit: 'grapheme', minLength: 1 }).filter((name) => !KNOWN.has(name)), data: fc.jsonValue() });
    const payload = fc.oneof(unknownEvent, fc.constant(ORDER_CREATED), fc.constant(STATUS_CHANGED));
    await fc.assert(
      fc.asyncProperty(
        payload,
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.integer({ min: -300, max: 300 }),
        fc.uuid(),
        async (given, secret, offset, deliveryId) => {
          const signed = signWebhook({ payload: given, secret, timestamp: NOW_SECONDS + offset, deliveryId });
          const event = await verify(signed.body, signed.headers, [`${secret}-old`, secret], { now: NOW });
          expect(event.event).toBe(given.event);
          expect(event.delivery_id).toBe(deliveryId);
        },
      ),
      RUNS,
    );
  });

  test('Buffer, Uint8Array and string bodies give the same outcome', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary' }), fc.boolean(), async (text, signed) => {
        const raw = encoder.encode(text);
        const timestamp = String(NOW_SECONDS);
        const given = {
          'x-service-event': 'order.created',
          'x-service-delivery-id': DELIVERY_ID,
          'x-service-timestamp': timestamp,
          'x-service-signature-256': signed ? signRaw(raw, timestamp) : `sha256=${'a'.repeat(64)}`,
        };
        const results = await Promise.all(
          [Buffer.from(raw), Uint8Array.from(raw), text].map(async (form) => {
            const { event, error } = await outcome(() => verify(form, given, SECRET, { now: NOW }));
            return error ? (error as WebhookVerificationError).reason : JSON.stringify(event);
          }),
        );
        expect(new Set(results).size).toBe(1);
        if (!signed) expect(results[0]).toBe('signature_mismatch');
      }),
      RUNS,
    );
  });
});
