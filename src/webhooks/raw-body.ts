import { fail } from './fail.ts';

/**
 * The body exactly as received. A Node `Buffer` is a `Uint8Array`; a string is UTF-8 encoded, so
 * pass a string only when the framework decoded the bytes as UTF-8 without changing them.
 */
export type WebhookRawBody = string | Uint8Array | ArrayBuffer;

/**
 * The body as given, bytes or text (a string is signed and parsed as its UTF-8 bytes, never copied
 * into a buffer of its own for node:crypto). A parsed object is refused: its bytes are gone.
 */
export function rawBodyOf(rawBody: WebhookRawBody): string | Uint8Array {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  return fail(
    'invalid_payload',
    'The body was parsed before verifying, but the signature covers the raw bytes: pass a string, Uint8Array or Buffer ' +
      "(express.raw({ type: 'application/json' }) in Express, await request.text() with a Request).",
  );
}
