import { fail } from './fail.ts';

const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/** The 32 bytes of an `X-Service-Signature-256` value of the form `sha256=<64 lowercase hex>`. */
export function readSignature(value: string): Uint8Array {
  if (!SIGNATURE.test(value)) {
    return fail(
      'invalid_signature_format',
      'X-Service-Signature-256 is not sha256=<64 lowercase hex digits>: pass the header value exactly as received, once.',
    );
  }
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = (hexDigit(value.charCodeAt(7 + i * 2)) << 4) | hexDigit(value.charCodeAt(8 + i * 2));
  return bytes;
}

// One of 0-9a-f, as the pattern above already ensured.
function hexDigit(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

const encoder = new TextEncoder();

/**
 * Spec 6.2: the signed text is `<timestamp>.<raw_body>`, the timestamp as it stands in the header,
 * in one buffer for Web Crypto (node:crypto is fed the two parts instead, see verify-webhook.ts).
 */
export function signedContent(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(`${timestamp}.${body}`);
  const prefix = encoder.encode(`${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}
