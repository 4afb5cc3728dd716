/**
 * HMAC-SHA256 on every runtime: `node:crypto` reached at run time for the synchronous helpers,
 * Web Crypto for the asynchronous ones (edge runtimes).
 */
import { IntegrationError } from '../errors/integration-error.ts';

/** An HMAC being computed; a string is fed as its UTF-8 bytes. */
interface Hmac {
  update(data: string | Uint8Array): Hmac;
  digest(): Uint8Array;
  digest(encoding: 'hex'): string;
}

/** The part of `node:crypto` the synchronous helpers use. */
export interface NodeCrypto {
  createHmac(algorithm: 'sha256', key: string): Hmac;
}

type GetBuiltinModule = (id: string) => unknown;

interface RuntimeGlobals {
  process?: { getBuiltinModule?: GetBuiltinModule };
}

let lookup: GetBuiltinModule | undefined;
let found: Partial<NodeCrypto> | undefined;

/**
 * `node:crypto` reached at run time, never imported, so that this entry loads on edge runtimes
 * (the async verifier has no use for it). `process.getBuiltinModule` exists on Node >= 22.3, Bun
 * and Deno.
 */
export function nodeCrypto(caller: string): NodeCrypto {
  const runtime = (globalThis as RuntimeGlobals).process;
  // Looked up again only when getBuiltinModule changed: a lookup costs ~5% of verifying a small delivery.
  if (runtime?.getBuiltinModule !== lookup) {
    lookup = runtime?.getBuiltinModule;
    found = lookup?.call(runtime, 'node:crypto') as Partial<NodeCrypto> | undefined;
  }
  if (typeof found?.createHmac !== 'function') {
    throw new IntegrationError(
      `${caller} needs node:crypto via process.getBuiltinModule (Node >= 22.3, Bun, Deno), missing on this runtime: ` +
        'on Cloudflare Workers, Vercel Edge or Deno Deploy use verifyWebhookAsync.',
    );
  }
  return found as NodeCrypto;
}

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
