import { fail } from './fail.ts';

/**
 * The body exactly as received. A Node `Buffer` is a `Uint8Array`; a string is UTF-8 encoded, so
 * pass a string only when the framework decoded the bytes as UTF-8 without changing them.
 */
export type WebhookRawBody = string | Uint8Array | ArrayBuffer;

const encoder = new TextEncoder();

/** The bytes the signature covers. A parsed object is refused: its bytes are gone. */
export function rawBodyBytes(rawBody: WebhookRawBody): Uint8Array {
  if (typeof rawBody === 'string') return encoder.encode(rawBody);
  if (rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  return fail(
    'invalid_payload',
    'The body was parsed before verifying, but the signature covers the raw bytes: pass a string, Uint8Array or Buffer ' +
      "(express.raw({ type: 'application/json' }) in Express, await request.text() with a Request).",
  );
}
