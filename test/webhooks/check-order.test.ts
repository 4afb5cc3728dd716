import { describe, expect, test } from 'vitest';
import { DELIVERY_ID, NOW, NOW_SECONDS, ORDER_CREATED, SECRET, VERIFIERS, delivery, reasonOf, signRaw } from './support/deliveries.ts';

const encoder = new TextEncoder();
const BAD_SIGNATURE = `sha256=${'0'.repeat(64)}`;

/** Headers of a delivery with `body`, correctly signed unless overridden. */
function headersFor(body: string, timestamp: number, overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const headers: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'x-service-event': 'order.created',
    'x-service-delivery-id': DELIVERY_ID,
    'x-service-timestamp': String(timestamp),
    'x-service-signature-256': signRaw(encoder.encode(body), String(timestamp)),
    ...overrides,
  };
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

describe.each(VERIFIERS)('order of the checks with %s', (_name, verify) => {
  const { body } = delivery(ORDER_CREATED);
  const stale = NOW_SECONDS - 301;
  const reason = (headers: Record<string, string>, rawBody: string = body) => reasonOf(() => verify(rawBody, headers, SECRET, { now: NOW }));

  test('a missing signature header comes before a malformed timestamp', async () => {
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-signature-256': undefined, 'x-service-timestamp': 'abc' }))).toBe('missing_header');
  });

  test('a missing timestamp header is missing_header', async () => {
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-timestamp': undefined }))).toBe('missing_header');
  });

  test('a malformed timestamp comes before a malformed signature', async () => {
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-timestamp': '12x', 'x-service-signature-256': 'nope' }))).toBe('invalid_timestamp');
  });

  test('a stale timestamp comes before a bad signature', async () => {
    expect(await reason(headersFor(body, stale, { 'x-service-signature-256': BAD_SIGNATURE }))).toBe('timestamp_out_of_tolerance');
  });

  test('a stale timestamp comes before a malformed signature', async () => {
    expect(await reason(headersFor(body, stale, { 'x-service-signature-256': 'sha256=XYZ' }))).toBe('timestamp_out_of_tolerance');
  });

  test('a malformed signature comes before the body is looked at', async () => {
    expect(await reason(headersFor('not json', NOW_SECONDS, { 'x-service-signature-256': 'sha256=abc' }), 'not json')).toBe('invalid_signature_format');
  });

  test('a signature mismatch comes before parsing and header agreement', async () => {
    const headers = headersFor('not json', NOW_SECONDS, { 'x-service-signature-256': BAD_SIGNATURE, 'x-service-event': 'other' });
    expect(await reason(headers, 'not json')).toBe('signature_mismatch');
  });

  test('a genuine body that is not JSON is invalid_payload', async () => {
    expect(await reason(headersFor('not json', NOW_SECONDS), 'not json')).toBe('invalid_payload');
  });

  test('a genuine body without the envelope fields is invalid_payload', async () => {
    const body = JSON.stringify({ event: 'order.created', data: {} });
    expect(await reason(headersFor(body, NOW_SECONDS), body)).toBe('invalid_payload');
  });

  test('header agreement comes before validating the known event data', async () => {
    const body = JSON.stringify({ event: 'order.created', delivery_id: DELIVERY_ID, ts: NOW_SECONDS, data: { broken: true } });
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-event': 'order.status_changed' }), body)).toBe('header_mismatch');
    expect(await reason(headersFor(body, NOW_SECONDS), body)).toBe('invalid_payload');
  });

  test('the event and delivery id headers are required, checked after the signature', async () => {
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-event': undefined }))).toBe('missing_header');
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-delivery-id': undefined }))).toBe('missing_header');
    expect(await reason(headersFor(body, NOW_SECONDS, { 'x-service-event': undefined, 'x-service-signature-256': BAD_SIGNATURE }))).toBe(
      'signature_mismatch',
    );
  });
});

describe.each(VERIFIERS)('timestamp tolerance with %s, both directions', (_name, verify) => {
  const at = (timestamp: number, toleranceSeconds?: number) => {
    const { body, headers } = delivery(ORDER_CREATED, { timestamp });
    return reasonOf(() => verify(body, headers, SECRET, { now: NOW, toleranceSeconds }));
  };

  test.each([
    ['exactly 300 s old', -300, 'valid'],
    ['301 s old', -301, 'timestamp_out_of_tolerance'],
    ['exactly 300 s ahead', 300, 'valid'],
    ['301 s ahead', 301, 'timestamp_out_of_tolerance'],
  ])('the default tolerance: %s', async (_label, offset, expected) => {
    expect(await at(NOW_SECONDS + offset)).toBe(expected);
  });

  test.each([
    [-60, 'valid'],
    [-61, 'timestamp_out_of_tolerance'],
    [60, 'valid'],
    [61, 'timestamp_out_of_tolerance'],
  ])('a custom tolerance of 60 s at offset %i', async (offset, expected) => {
    expect(await at(NOW_SECONDS + offset, 60)).toBe(expected);
  });

  test('a tolerance of 0 accepts only the same second', async () => {
    expect(await at(NOW_SECONDS, 0)).toBe('valid');
    expect(await at(NOW_SECONDS - 1, 0)).toBe('timestamp_out_of_tolerance');
  });

  test('now is a Date or epoch milliseconds, floored to the second', async () => {
    const { body, headers } = delivery(ORDER_CREATED, { timestamp: NOW_SECONDS - 300 });
    expect(await reasonOf(() => verify(body, headers, SECRET, { now: NOW_SECONDS * 1000 + 999 }))).toBe('valid');
    expect(await reasonOf(() => verify(body, headers, SECRET, { now: new Date(NOW_SECONDS * 1000 + 999) }))).toBe('valid');
    expect(await reasonOf(() => verify(body, headers, SECRET, { now: (NOW_SECONDS + 1) * 1000 }))).toBe('timestamp_out_of_tolerance');
  });

  test('the stale message says to check the clock and by how much it is off', async () => {
    const { body, headers } = delivery(ORDER_CREATED, { timestamp: NOW_SECONDS - 400 });
    await expect(async () => verify(body, headers, SECRET, { now: NOW })).rejects.toThrow(/400 s in the past.*check the server clock/);
  });

  test('invalid options are refused at once, not treated as "accept everything"', async () => {
    const { body, headers } = delivery();
    expect(await reasonOf(() => verify(body, headers, SECRET, { now: NOW, toleranceSeconds: Number.NaN }))).toMatch(/toleranceSeconds/);
    expect(await reasonOf(() => verify(body, headers, SECRET, { now: NOW, toleranceSeconds: -1 }))).toMatch(/toleranceSeconds/);
    expect(await reasonOf(() => verify(body, headers, SECRET, { now: new Date(Number.NaN) }))).toMatch(/now must be/);
  });
});
