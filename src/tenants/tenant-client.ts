/**
 * One tenant's `IntegrationClient`. It holds no key: its transport reads the tenant from the store
 * at each call (the key is opened again only when it changed), so that a tenant turned `key_invalid`
 * or disconnected by any process sharing the store sends nothing more, and a key replaced by
 * `updateKey` anywhere is used at once. Its limiter checks the store again right before each
 * attempt (after any wait for a token). A 401 marks the tenant `key_invalid` and the call throws
 * `TenantKeyInvalidError` with the `AuthenticationError` as its cause.
 */
import { IntegrationClient, TRANSPORT_FACTORY } from '../client.ts';
import type { Clock } from '../clock.ts';
import { AuthenticationError } from '../errors/index.ts';
import { TenantKeyInvalidError, TenantNotFoundError } from '../errors/tenant-errors.ts';
import { HttpRequester, type TransportSettings } from '../transport/http-requester.ts';
import type { Logger } from '../transport/logger.ts';
import type { RateLimiter } from '../transport/rate-limiter.ts';
import type { RequestSpec, Requester } from '../transport/types.ts';
import type { Credentials } from './credentials.ts';
import type { TenantRecord, TenantStore } from './store.ts';
import type { CreateTenantsOptions } from './types.ts';

/** What every tenant client reads and reports to. */
export interface TenantAccess {
  store: TenantStore;
  credentials: Credentials;
  clock: Clock;
  logger: Partial<Logger> | undefined;
}

/** The tenant, if its client may send: unknown, disconnected and `key_invalid` tenants throw. */
export function sendable(id: string, record: TenantRecord | null): TenantRecord {
  if (record === null) throw new TenantNotFoundError(id, 'unknown');
  if (record.status === 'disconnected' || record.status === 'disconnecting') throw new TenantNotFoundError(id, 'disconnected');
  if (record.status === 'key_invalid') throw new TenantKeyInvalidError(id, isoOrNull(record.keyInvalidAt));
  return record;
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Wraps the budget's limiter: once a token is granted (a fair wait may have lasted seconds), the
 * tenant is read again; one that may no longer send gives its token back and the attempt is refused
 * (an `IntegrationError`, so the client neither sends nor retries).
 */
function guardedLimiter(id: string, inner: RateLimiter, access: TenantAccess): RateLimiter {
  return {
    async acquire(...args: Parameters<RateLimiter['acquire']>) {
      const finished = await inner.acquire(...args);
      try {
        sendable(id, await access.store.get(id));
      } catch (error) {
        if (typeof finished === 'function') finished();
        throw error;
      }
      return finished;
    },
    pause: (ms) => inner.pause(ms),
    ...(inner.honoursBudget === undefined ? {} : { honoursBudget: inner.honoursBudget }),
    ...(inner.attach ? { attach: (client: Parameters<NonNullable<RateLimiter['attach']>>[0]) => inner.attach!(client) } : {}),
  };
}

/** The transport of one tenant's client: the tenant's current key, read per call. */
class TenantTransport implements Requester {
  readonly #id: string;
  readonly #settings: TransportSettings;
  readonly #access: TenantAccess;
  #current: { generation: number; requester: HttpRequester } | undefined;

  constructor(id: string, settings: TransportSettings, access: TenantAccess) {
    this.#id = id;
    this.#settings = settings;
    this.#access = access;
  }

  async send<T>(spec: RequestSpec<T>): Promise<T> {
    const record = sendable(this.#id, await this.#access.store.get(this.#id));
    try {
      return await this.#requesterFor(record).send(spec);
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      const retry = await this.#onRefusedKey(record, error);
      return retry.send(spec);
    }
  }

  /**
   * A 401 with the key of `record`: the tenant becomes `key_invalid` unless its key was replaced
   * meanwhile, in which case the call is repeated once with the new key.
   */
  async #onRefusedKey(record: TenantRecord, error: AuthenticationError): Promise<HttpRequester> {
    const { store, clock, logger } = this.#access;
    const at = clock.now();
    if (await store.markKeyInvalid(this.#id, record.keyGeneration, at)) {
      logger?.warn?.('integration-sdk tenants: a tenant key was refused (401): the tenant is key_invalid until updateKey', { tenantId: this.#id });
      throw new TenantKeyInvalidError(this.#id, new Date(at).toISOString(), { cause: error });
    }
    const now = await store.get(this.#id);
    if (now !== null && now.status === 'active' && now.keyGeneration !== record.keyGeneration) return this.#requesterFor(now);
    throw new TenantKeyInvalidError(this.#id, isoOrNull(now?.keyInvalidAt ?? null), { cause: error });
  }

  #requesterFor(record: TenantRecord): HttpRequester {
    if (this.#current?.generation !== record.keyGeneration) {
      const apiKey = this.#access.credentials.openApiKey(record);
      if (apiKey === null) throw new TenantNotFoundError(this.#id, 'disconnected');
      this.#current = { generation: record.keyGeneration, requester: new HttpRequester({ ...this.#settings, apiKey }) };
      // The budget names the key's bucket from its id (never its secret), as integration-sdk/redis
      // does, so the tenant's other processes on the same key share one bucket.
      this.#settings.limiter.attach?.({ keyId: apiKey.split('_')[1]!, logger: this.#settings.logger });
    }
    return this.#current.requester;
  }
}

/**
 * The key a tenant client is built with before its transport replaces it: well formed, never sent.
 * Its key id is the tenant's (hex), so a limiter that names its bucket from it keeps tenants apart.
 */
function placeholderKey(id: string): string {
  return `service_t${Buffer.from(id, 'utf8').toString('hex')}_unsent`;
}

/** Builds the client of tenant `id` on `limiter` (the budget's). */
export function tenantClient(id: string, limiter: RateLimiter, access: TenantAccess, options: Pick<CreateTenantsOptions, 'baseUrl' | 'clientOptions'>): IntegrationClient {
  return new IntegrationClient({
    ...options.clientOptions,
    apiKey: placeholderKey(id),
    baseUrl: options.baseUrl,
    rateLimit: guardedLimiter(id, limiter, access),
    clock: access.clock,
    ...(access.logger ? { logger: access.logger } : {}),
    [TRANSPORT_FACTORY]: (settings: TransportSettings) => new TenantTransport(id, settings, access),
  } as ConstructorParameters<typeof IntegrationClient>[0]);
}
