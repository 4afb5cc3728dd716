/**
 * Which secrets may have signed a request, and whose delivery it is: one merchant's fixed secrets
 * (`createInbox({ secret })`), or the tenant the URL names and its secrets in the tenants registry
 * (`createInbox({ tenants })`), cached (./tenant-secrets.ts).
 */
import type { Clock } from '../clock.ts';
import { tenantIdProblem } from '../tenants/tenant-id.ts';
import type { TenantsReceiving } from '../tenants/receiving.ts';
import { nodeCrypto } from '../webhooks/crypto.ts';
import type { WebhookHeaders } from '../webhooks/signature.ts';
import type { Addressee, KnownSecret } from './addressee.ts';
import { TenantSecretsCache } from './tenant-secrets.ts';

/** What the receiver knows of a request before reading its body. */
export interface RequestTarget {
  /** As received: an absolute URL (Fetch) or the path and query (node:http). */
  url: string;
  headers: WebhookHeaders;
}

export interface DeliverySecrets {
  /** The addressee of a request; `null` for an unknown or disconnected tenant (404). */
  addressee(request: RequestTarget): Promise<Addressee | null>;
  /** The addressee read again: after a delivery no secret verified, or (`force`) while one is held. */
  again(addressee: Addressee, force: boolean): Promise<Addressee | null>;
  /** A delivery verified with `secret`: recorded the first time (a rotation waits on it). */
  verified(addressee: Addressee, secret: KnownSecret): void;
  close(): void;
}

/**
 * The opaque id a single-merchant inbox keeps of the secret that verified a delivery: a prefix of
 * a keyed hash of it, which tells two secrets apart and says nothing useful of either (a secret has
 * 128 bits or more; 48 bits of a hash of it are no help in guessing it).
 */
export function secretIdOf(secret: string): string {
  return `sha256:${nodeCrypto('createInbox').createHmac('sha256', 'integration-sdk inbox secret id').update(secret).digest('hex').slice(0, 12)}`;
}

/** `createInbox({ secret })`: every request is the one merchant's, with the same secrets. */
export function fixedSecrets(secrets: readonly string[]): DeliverySecrets {
  const addressee: Addressee = {
    tenant: undefined,
    secrets: secrets.map((secret) => ({ id: secretIdOf(secret), secret, createdAt: null, verifiedAt: null })),
    rotating: false,
  };
  return {
    addressee: async () => addressee,
    again: async () => addressee,
    verified: () => {},
    close: () => {},
  };
}

/** What `tenantFrom` is given: the request as received. */
export interface TenantRequest {
  /** The URL as received: absolute (Fetch), or the path and query (node:http, Express). */
  url: string;
  /** The path alone, without the query. */
  pathname: string;
  headers: WebhookHeaders;
}

/** The last segment of the path (a trailing slash ignored), decoded. */
export function lastPathSegment(pathname: string): string {
  const segments = pathname.split('/');
  const last = segments.at(-1) === '' ? segments.at(-2) : segments.at(-1);
  try {
    return decodeURIComponent(last ?? '');
  } catch {
    return '';
  }
}

function pathnameOf(url: string): string {
  try {
    return new URL(url, 'http://receiver.invalid').pathname;
  } catch {
    return '';
  }
}

/** `createInbox({ tenants })`: the tenant from the URL (or `tenantFrom`), its secrets from the registry. */
export function registrySecrets(
  receiving: TenantsReceiving,
  options: { tenantFrom: ((request: TenantRequest) => string | null | undefined) | undefined; clock: Clock; onError: (error: unknown) => void },
): DeliverySecrets {
  const cache = new TenantSecretsCache(receiving, options.clock, options.onError);
  return {
    async addressee(request) {
      const pathname = pathnameOf(request.url);
      const tenant = options.tenantFrom ? options.tenantFrom({ url: request.url, pathname, headers: request.headers }) : lastPathSegment(pathname);
      // Not a tenant id at all (a probe, a typo): no read of the registry.
      if (typeof tenant !== 'string' || tenantIdProblem(tenant) !== null) return null;
      return cache.get(tenant);
    },
    again: (addressee, force) => cache.reread(addressee.tenant!, force),
    verified: (addressee, secret) => cache.markVerified(addressee.tenant!, secret),
    close: () => cache.close(),
  };
}
