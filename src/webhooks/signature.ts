import { fail } from './fail.ts';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

/** The 32 bytes of an `X-Service-Signature-256` value of the form `sha256=<64 lowercase hex>`. */
export function readSignature(value: string): Uint8Array {
  const hex = SIGNATURE.exec(value)?.[1];
  if (hex === undefined) {
    return fail(
      'invalid_signature_format',
      'X-Service-Signature-256 is not sha256=<64 lowercase hex digits>: pass the header value exactly as received, once.',
    );
  }
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** Lowercase hex, as in the signature header. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

const encoder = new TextEncoder();

/** Spec 6.2: the signed text is `<timestamp>.<raw_body>`, the timestamp as it stands in the header. */
export function signedContent(timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}
