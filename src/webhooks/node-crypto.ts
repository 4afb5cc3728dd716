import { IntegrationError } from '../errors/integration-error.ts';

/** The part of `node:crypto` the synchronous helpers use. */
export interface NodeCrypto {
  createHmac(algorithm: 'sha256', key: string): { update(data: Uint8Array): { digest(): Uint8Array } };
}

interface RuntimeGlobals {
  process?: { getBuiltinModule?: (id: string) => unknown };
}

/**
 * `node:crypto` reached at run time, never imported, so that this entry loads on edge runtimes
 * (the async verifier has no use for it). `process.getBuiltinModule` exists on Node >= 22.3, Bun
 * and Deno.
 */
export function nodeCrypto(caller: string): NodeCrypto {
  const crypto = (globalThis as RuntimeGlobals).process?.getBuiltinModule?.('node:crypto') as Partial<NodeCrypto> | undefined;
  if (typeof crypto?.createHmac !== 'function') {
    throw new IntegrationError(
      `${caller} needs node:crypto via process.getBuiltinModule (Node >= 22.3, Bun, Deno), missing on this runtime: ` +
        'on Cloudflare Workers, Vercel Edge or Deno Deploy use verifyWebhookAsync.',
    );
  }
  return crypto as NodeCrypto;
}
