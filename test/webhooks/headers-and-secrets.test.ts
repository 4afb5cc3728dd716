import { describe, expect, test } from 'vitest';
import { ConfigurationError, InvalidInputError, WebhookVerificationError as MainEntryError } from '../../src/errors/index.ts';
import { WebhookVerificationError } from 'integration-sdk/webhooks';
import { NOW, ORDER_CREATED, SECRET, VERIFIERS, delivery, reasonOf } from './support/deliveries.ts';

const { body, headers } = delivery(ORDER_CREATED);
const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
const signature = headers['X-Service-Signature-256'];

describe.each(VERIFIERS)('header lookup with %s', (_name, verify) => {
  const reason = (given: Parameters<typeof verify>[1]) => reasonOf(() => verify(body, given, SECRET, { now: NOW }));

  test.each([
    ['as signWebhook names them', headers],
    ['lower-case (node:http)', lower],
    ['upper-case', upper],
    ['in a Fetch Headers', new Headers(headers)],
  ])('finds the headers %s', async (_label, given) => {
    expect(await reason(given)).toBe('valid');
  });

  test('takes a one-element array value as that value', async () => {
    expect(await reason({ ...lower, 'x-service-signature-256': [signature], 'x-service-timestamp': [lower['x-service-timestamp']!] })).toBe('valid');
  });

  test('rejects a header sent twice instead of guessing which copy counts', async () => {
    expect(await reason({ ...lower, 'x-service-signature-256': [signature, signature] })).toBe('invalid_signature_format');
    expect(await reason({ ...lower, 'x-service-timestamp': [lower['x-service-timestamp']!, lower['x-service-timestamp']!] })).toBe('invalid_timestamp');
    expect(await reason({ ...lower, 'X-Service-Signature-256': signature })).toBe('invalid_signature_format');
    const twice = new Headers(headers);
    twice.append('X-Service-Signature-256', signature);
    expect(await reason(twice)).toBe('invalid_signature_format');
  });

  test('treats an empty array or an undefined value as a missing header', async () => {
    expect(await reason({ ...lower, 'x-service-signature-256': [] })).toBe('missing_header');
    expect(await reason({ ...lower, 'x-service-timestamp': undefined })).toBe('missing_header');
  });
});

describe.each(VERIFIERS)('secrets with %s', (_name, verify) => {
  const reason = (secret: Parameters<typeof verify>[2]) => reasonOf(() => verify(body, headers, secret, { now: NOW }));

  test('any secret of an array may match (rotation), in any position', async () => {
    expect(await reason([SECRET, 'whsec_new'])).toBe('valid');
    expect(await reason(['whsec_old', SECRET])).toBe('valid');
    expect(await reason(['whsec_old', 'whsec_new'])).toBe('signature_mismatch');
  });

  test('an empty secret is a configuration error, not a silent mismatch', async () => {
    for (const secret of ['', [], [SECRET, '']]) {
      const failure = await reasonOf(async () => {
        try {
          return await verify(body, headers, secret, { now: NOW });
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigurationError);
          throw error;
        }
      });
      expect(failure).toMatch(/secret is empty/);
    }
  });

  test('the mismatch message names the likely mistakes', async () => {
    const error = await verifyError(() => verify(body, headers, 'whsec_other', { now: NOW }));
    expect(error.message).toMatch(/parsed and re-serialised before verifying\? Use the raw bytes/);
    expect(error.message).toMatch(/whsec_ value shown at creation, without whitespace/);
  });

  test('the mismatch message points at whitespace around a secret and a secret that is not whsec_', async () => {
    expect((await verifyError(() => verify(body, headers, `${SECRET}\n`, { now: NOW }))).message).toMatch(/whitespace \(a line break/);
    expect((await verifyError(() => verify(body, headers, 'service_abc_def', { now: NOW }))).message).toMatch(/is it the API key\?/);
  });

  test('a body parsed before verifying is refused with the way to get the raw bytes', async () => {
    const error = await verifyError(() => verify(JSON.parse(body) as never, headers, SECRET, { now: NOW }));
    expect(error.reason).toBe('invalid_payload');
    expect(error.message).toMatch(/express\.raw\(\{ type: 'application\/json' \}\)/);
  });
});

describe.each(VERIFIERS)('%s with arguments of the wrong kind', (_, verify) => {
  test('null or missing headers are an InvalidInputError, not a TypeError', async () => {
    const { body } = delivery();
    await expect(async () => verify(body, null as never, SECRET, { now: NOW })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(async () => verify(body, undefined as never, SECRET, { now: NOW })).rejects.toThrow(/headers/);
  });

  test('null or non-object options are a ConfigurationError', async () => {
    const { body, headers } = delivery();
    await expect(async () => verify(body, headers, SECRET, null as never)).rejects.toBeInstanceOf(ConfigurationError);
    await expect(async () => verify(body, headers, SECRET, 300 as never)).rejects.toBeInstanceOf(ConfigurationError);
  });
});

test('the error is one class with the main entry', async () => {
  expect(WebhookVerificationError).toBe(MainEntryError);
  const error = await verifyError(() => VERIFIERS[0]![1](body, headers, 'whsec_other', { now: NOW }));
  expect(error).toBeInstanceOf(MainEntryError);
  expect(error.name).toBe('WebhookVerificationError');
});

async function verifyError(run: () => unknown): Promise<WebhookVerificationError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('expected the verification to fail');
}
