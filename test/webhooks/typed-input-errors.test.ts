// Issue 14 item 8: programmer mistakes are typed errors, never raw TypeErrors.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, WebhookVerificationError } from '../../src/errors/index.ts';
import { signWebhook, verifyWebhook, verifyWebhookAsync } from '../../src/webhooks/index.ts';

const secret = 'whsec_typed_errors';
const signed = signWebhook({ payload: { event: 'webhook.test', data: { webhook_id: 'w', message: 'hi' } }, secret });

describe('verifyWebhook', () => {
  it.each([null, undefined, 42, 'x-service-signature-256'])('headers %j: WebhookVerificationError missing_header', async (headers) => {
    expect(() => verifyWebhook(signed.body, headers as never, secret)).toThrow(WebhookVerificationError);
    await expect(verifyWebhookAsync(signed.body, headers as never, secret)).rejects.toMatchObject({ reason: 'missing_header' });
  });
  it.each([null, 42, 'opts'])('options %j: ConfigurationError', (options) => {
    expect(() => verifyWebhook(signed.body, signed.headers, secret, options as never)).toThrow(ConfigurationError);
  });
});

describe('signWebhook', () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  it.each([
    ['no options', undefined],
    ['no payload', { secret }],
    ['a null payload', { secret, payload: null }],
    ['a BigInt in data', { secret, payload: { event: 'webhook.test', data: { n: 1n } } }],
    ['a cycle in data', { secret, payload: { event: 'webhook.test', data: cycle } }],
    ['CR LF in the event name', { secret, payload: { event: 'order.created\r\nX-Injected: 1', data: {} } }],
    ['a missing event name', { secret, payload: { data: {} } }],
    ['LF in the delivery id', { secret, payload: { event: 'webhook.test', data: {} }, deliveryId: 'a\nb' }],
  ])('%s: ConfigurationError', (_name, options) => {
    expect(() => signWebhook(options as never)).toThrow(ConfigurationError);
  });
});
