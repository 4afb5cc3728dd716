import { IntegrationError } from '../errors/integration-error.ts';

const encoder = new TextEncoder();

/** HMAC-SHA256 with Web Crypto, available on every runtime this SDK supports, edge ones included. */
export async function webHmacSha256(secret: string, content: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) {
    throw new IntegrationError('verifyWebhookAsync needs Web Crypto (crypto.subtle), missing on this runtime: use verifyWebhook.');
  }
  const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', key, content));
}
