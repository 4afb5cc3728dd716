import type { IntegrationClient, IntegrationClientOptions } from '../client.ts';
import type { Clock } from '../clock.ts';
import type { Scope, SubscribableEvent } from '../schemas/index.ts';
import type { Logger } from '../transport/logger.ts';
import type { EncryptionKeyOption } from './encryption.ts';
import type { TenantStatus, TenantStore } from './store.ts';

export type { EncryptionKeyOption, TenantStatus };

/**
 * A tenant as `connect`, `get` and `list` return it: never a key or a secret.
 *
 * @example
 * ```ts
 * const t = await tenants.get('loja-42');
 * if (t?.status === 'key_invalid') console.log(`ask ${t.id} for a new key (refused at ${t.keyInvalidAt})`);
 * ```
 */
export interface Tenant {
  /** Your id for the merchant: a URL path segment (the last one of its webhook URL). */
  id: string;
  /** The merchant that owns the key (`health().merchant_id`). */
  merchantId: string;
  /** The stores the key may write; empty means every store of the merchant. */
  storeIds: string[];
  /** The scopes the key has. */
  scopes: string[];
  /** Of the six scopes, those the key lacks (features that will answer 403). */
  missingScopes: Scope[];
  /** The webhook endpoint deliveries go to; `null` until the first connect registered one. */
  endpointId: string | null;
  status: TenantStatus;
  /** When the tenant first finished connecting (ISO 8601). */
  connectedAt: string | null;
  /** When its key met a 401 (ISO 8601); `null` unless `key_invalid`. */
  keyInvalidAt: string | null;
  /** When it was disconnected (ISO 8601). */
  disconnectedAt: string | null;
}

/** Options of `createTenants`. */
export interface CreateTenantsOptions {
  /** Where tenants and their sealed credentials live: `sqliteTenantStore` or `postgresTenantStore`. */
  store: TenantStore;
  /**
   * 32 random bytes in base64 (`openssl rand -base64 32`), never stored; or `{ current, previous }`
   * while re-keying: `current` seals, `previous` keys only open (run `rekey()`, then drop them).
   */
  encryptionKey: EncryptionKeyOption;
  /** The platform's address, as for `IntegrationClient`. */
  baseUrl: string;
  /** The URL of a tenant's webhook endpoint; its last path segment must be the tenant id. */
  webhookUrl: (tenantId: string) => string;
  /** Events each endpoint subscribes to. @default ['order.created', 'order.status_changed'] */
  events?: SubscribableEvent[];
  /** A node-redis (>= 5) or ioredis client: key buckets and the egress budget shared by every process. */
  redis?: unknown;
  /** Each merchant key's bucket. @default { requestsPerMinute: 120, burst: 120 } */
  keyBudget?: { requestsPerMinute?: number; burst?: number };
  /** The budget of the egress IP these processes share. @default { id: 'default', requestsPerMinute: 300, burst: 300 } */
  egress?: { id?: string; requestsPerMinute?: number; burst?: number };
  /** Idle clients kept for reuse (least recently used dropped first); clients in use are always kept. @default 100 */
  maxIdleClients?: number;
  /** Options of every tenant's `IntegrationClient` (time-outs, retries, `fetch`), but its key, URL and limiter. */
  clientOptions?: Omit<IntegrationClientOptions, 'apiKey' | 'baseUrl' | 'rateLimit' | 'clock' | 'logger'>;
  /** Receives one `warn` when a tenant's key is found invalid; never a key or a secret. */
  logger?: Partial<Logger>;
  /** Time for records, clients and the budget (tests). @default the system clock */
  clock?: Clock;
}

/** `connect(id, input)`. */
export interface ConnectInput {
  /** The merchant's key, `service_<key_id>_<secret>`. */
  apiKey: string;
  /** Let this tenant id hold a merchant another tenant id already holds (a test-store key). @default false */
  allowSameMerchant?: boolean;
}

/** `list(options)`. */
export interface ListTenantsOptions {
  /** Only tenants in this status (or these). @default every status but `disconnected` */
  status?: TenantStatus | readonly TenantStatus[];
}

/**
 * What `disconnect(id)` did: the tenant as it is now (`disconnected`), and the endpoints it could
 * not delete at the service because the key that owns them is refused (`key_invalid`, or a 401
 * now): they deliver nothing (the merchant's revoked key took them out of service); if the
 * platform still lists them, delete them with a valid key of the merchant.
 *
 * @example
 * ```ts
 * const { endpointsLeft } = await tenants.disconnect('loja-42');
 * if (endpointsLeft.length > 0) console.log(`not deleted (the key was revoked): ${endpointsLeft.join(', ')}`);
 * ```
 */
export interface DisconnectResult {
  tenant: Tenant;
  endpointsLeft: string[];
}

/** What `rekey()` did. */
export interface RekeyResult {
  /** Values moved to `encryptionKey.current`. */
  resealed: number;
  /** Values already under it. */
  unchanged: number;
}

/**
 * The tenants registry returned by `createTenants`.
 *
 * @example
 * ```ts
 * const t = await tenants.connect('loja-42', { apiKey: pastedKey });
 * await tenants.client('loja-42').stock.set(items);
 * ```
 */
export interface Tenants {
  /**
   * Connects a merchant: checks the key's shape, calls `health()` (merchant, stores, scopes;
   * `webhooks:manage` and `orders:read` are required), refuses a second id for one merchant unless
   * `allowSameMerchant`, finds or registers its endpoint at `webhookUrl(id)`, keeps its secret, sends
   * `webhooks.test`. Never leaves an orphan endpoint; calling it again completes an interrupted one.
   *
   * @example
   * ```ts
   * const t = await tenants.connect('loja-42', { apiKey: pastedKey });
   * if (t.missingScopes.length > 0) console.log(`loyalty and catalog features need ${t.missingScopes.join(', ')}`);
   * ```
   */
  connect(id: string, input: ConnectInput): Promise<Tenant>;
  /**
   * A new key for a connected tenant (same merchant, checked with `health()`); clears `key_invalid`.
   * Endpoints belong to the key that registered them, so the tenant's endpoint moves to the new
   * key: registered (or found) under it and tested, then the old key's endpoint deleted with the old
   * key (unless that key is refused: it delivers nothing), then the old secret dropped; both secrets
   * are held meanwhile and the inbox runs each event once. `connect` with another key does the same.
   * Calling it again completes one that stopped.
   *
   * @example
   * ```ts
   * await tenants.updateKey('loja-42', newlyPastedKey);
   * ```
   */
  updateKey(id: string, apiKey: string): Promise<Tenant>;
  /**
   * Deletes its endpoints and erases its credentials; the record stays as `disconnected`. Calling it
   * again completes an interrupted one. A key known refused is not sent: the endpoints it owns are
   * named in `endpointsLeft` (they deliver nothing).
   *
   * @example
   * ```ts
   * const { endpointsLeft } = await tenants.disconnect('loja-42');
   * ```
   */
  disconnect(id: string): Promise<DisconnectResult>;
  /**
   * The tenant, or `null` for an id never connected.
   *
   * @example
   * ```ts
   * const t = await tenants.get('loja-42');
   * ```
   */
  get(id: string): Promise<Tenant | null>;
  /**
   * Tenants in id order, read from the store page by page.
   *
   * @example
   * ```ts
   * for await (const t of tenants.list({ status: 'key_invalid' })) console.log(t.id, t.keyInvalidAt);
   * ```
   */
  list(options?: ListTenantsOptions): AsyncIterable<Tenant>;
  /**
   * The tenant's client: the same one while it is in use; idle ones are dropped. Its key is read from
   * the store at each call; a `key_invalid`, unknown or disconnected tenant's calls fail at once.
   *
   * @example
   * ```ts
   * await tenants.client('loja-42').loyalty.credit({ phone, points: 10 });
   * ```
   */
  client(id: string): IntegrationClient;
  /**
   * Replaces the tenant's webhook secret without losing or doubling an order (the service has no
   * rotate route): registers a second endpoint at its URL with the same events and keeps both
   * secrets; sends `webhooks.test` to it and waits (up to 60 s) until a receiver verified it with
   * the new secret or the delivery log shows it delivered; then deletes the old endpoint and drops
   * its secret. Each step is recorded before it runs: calling it again resumes an interrupted
   * rotation. Refused with `TenantRotationError` when no endpoint slot is free (`endpoint_limit`,
   * naming them) or nothing verified the test in time (`not_verified`; both endpoints stay). Returns
   * the tenant with its new `endpointId`. See docs/webhooks.md, "Rotating the secret".
   *
   * @example
   * ```ts
   * const t = await tenants.rotateWebhookSecret('loja-42');
   * console.log(`deliveries of ${t.id} now come from endpoint ${t.endpointId}`);
   * ```
   */
  rotateWebhookSecret(id: string): Promise<Tenant>;
  /**
   * Re-seals every credential under `encryptionKey.current` (the others must be in `previous`).
   *
   * @example
   * ```ts
   * const { resealed } = await tenants.rekey();
   * ```
   */
  rekey(): Promise<RekeyResult>;
  /**
   * Drops the clients and closes the budget and the store.
   *
   * @example
   * ```ts
   * await tenants.close();
   * ```
   */
  close(): Promise<void>;
}
