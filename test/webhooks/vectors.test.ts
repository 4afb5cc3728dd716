import { describe, expect, test } from 'vitest';
import { WebhookVerificationError } from 'integration-sdk/webhooks';
import { VERIFIERS, outcome } from './support/deliveries.ts';
import { bodyForms, headerForms, vectors } from './support/vectors.ts';

describe.each(VERIFIERS)('shared signature vectors with %s', (_name, verify) => {
  test('the vector file is there', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(30);
  });

  for (const vector of vectors) {
    for (const [bodyForm, body] of bodyForms(vector)) {
      for (const [headerForm, headers] of headerForms(vector)) {
        test(`${vector.name} (${bodyForm} body, ${headerForm})`, async () => {
          const result = await outcome(() =>
            verify(body, headers, vector.secret, { now: vector.now * 1000, toleranceSeconds: vector.tolerance_s }),
          );
          if (vector.expect.valid) {
            expect(result.error).toBeUndefined();
            expect(result.event?.event).toBe(vector.expect.event);
          } else {
            expect(result.error).toBeInstanceOf(WebhookVerificationError);
            expect([vector.expect.reason, ...(vector.expect.also_accept ?? [])]).toContain((result.error as WebhookVerificationError).reason);
          }
        });
      }
    }
  }
});
