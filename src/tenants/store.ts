/**
 * The `TenantStore` contract: where `createTenants` keeps tenants, their sealed credentials and the
 * progress of a connect or disconnect. A store only ever sees sealed values (ciphertext made by
 * `createTenants`); it never encrypts, decrypts or sees a key. Times are epoch milliseconds.
 * `sqliteTenantStore` and `postgresTenantStore` pass `tenantStoreConformance`; so must a user's own.
 */

/**
 * Where a tenant stands:
 * - `connecting`: a `connect` began (its key is stored) and has not finished; a second `connect` completes it;
 * - `active`: connected; its client sends;
 * - `key_invalid`: its key met a 401; nothing is sent with it until `updateKey`;
 * - `disconnecting`: a `disconnect` began and has not finished; a second `disconnect` completes it;
 * - `disconnected`: its endpoints were deleted and its credentials erased; the record stays.
 */
export type TenantStatus = 'connecting' | 'active' | 'key_invalid' | 'disconnecting' | 'disconnected';

export const TENANT_STATUSES: readonly TenantStatus[] = ['connecting', 'active', 'key_invalid', 'disconnecting', 'disconnected'];

/** A tenant as stored. `apiKey` is sealed (or `null` once erased). */
export interface TenantRecord {
  id: string;
  merchantId: string;
  storeIds: string[];
  scopes: string[];
  status: TenantStatus;
  /** The sealed API key; `null` after a disconnect. */
  apiKey: string | null;
  /** Counts key changes: a 401 marks the tenant only if met with the key of this generation. */
  keyGeneration: number;
  /** The endpoint deliveries currently go to (`null` before the first one is registered). */
  endpointId: string | null;
  /** Whether this tenant may share its merchant with another tenant id. */
  allowSameMerchant: boolean;
  connectedAt: number | null;
  keyInvalidAt: number | null;
  disconnectedAt: number | null;
  updatedAt: number;
  /**
   * While a rotation of its webhook secret is in progress: when it began (before its second
   * endpoint is registered); `null` otherwise. Receivers hold a delivery no known secret verifies
   * while it is set (the new endpoint may deliver before its secret is stored). See {@link TenantStore.setRotating}.
   */
  rotatingSince: number | null;
}

/** One webhook secret of a tenant, tied to its endpoint (two side by side during a rotation). */
export interface TenantSecretRecord {
  tenantId: string;
  endpointId: string;
  /** Sealed. */
  secret: string;
  createdAt: number;
  /**
   * When a receiver first verified a delivery with this secret (`markSecretVerified`); `null` until
   * then, and for a secret just put (a replaced secret starts again). Left out by `putSecret` callers.
   */
  verifiedAt?: number | null;
}

/**
 * What {@link TenantStore.secretChanges} answers: the changes that may alter what a receiver accepts
 * for a tenant (a secret put or dropped, a status change, a rotation begun or ended), numbered in
 * the order they were written.
 */
export interface SecretChanges {
  /** Changes numbered above `after`, in order (at most `limit`). */
  changes: { seq: number; tenantId: string }[];
  /** The highest number written so far (0 before any). */
  latest: number;
}

/** The store keeps at least this many latest changes; a reader further behind forgets every tenant. */
export const SECRET_CHANGES_KEPT = 10_000;

/** `beginConnect`: the tenant as `health()` described its key, and the sealed key. */
export interface ConnectIntent {
  id: string;
  merchantId: string;
  storeIds: string[];
  scopes: string[];
  apiKey: string;
  /** False when the key is the one already stored (same plaintext): its generation is kept. */
  keyChanged: boolean;
  allowSameMerchant: boolean;
  at: number;
}

/**
 * What `beginConnect` did: wrote the intent (`ok`), or wrote nothing because another tenant id holds
 * the merchant (`merchant_taken`) or the tenant is connected to another merchant (`merchant_mismatch`).
 */
export type ConnectIntentResult =
  | { outcome: 'ok'; record: TenantRecord }
  | { outcome: 'merchant_taken'; existingTenantId: string }
  | { outcome: 'merchant_mismatch'; merchantId: string };

/** `replaceKey`: a new key for a tenant that is `active` or `key_invalid`. */
export interface KeyReplacement {
  id: string;
  apiKey: string;
  scopes: string[];
  storeIds: string[];
  at: number;
}

/** A sealed value as `rekey` walks them: the tenant's key, or one of its secrets. */
export interface SealedValueRef {
  tenantId: string;
  /** `null` for the API key; the endpoint id for a webhook secret. */
  endpointId: string | null;
  sealed: string;
}

/**
 * Where a webhook secret rotation (`tenants.rotateWebhookSecret`) stands, recorded before each of
 * its external steps so that a second call resumes it:
 * - `registering`: a second endpoint is being registered at the tenant's URL (its secret is stored
 *   as soon as the service answers);
 * - `verifying`: the new endpoint (`newEndpointId`, its secret stored) is sent `webhooks.test` until
 *   a receiver verified it with the new secret;
 * - `retiring`: the tenant's deliveries go to the new endpoint; the old one is being deleted, then its secret.
 */
export type TenantRotationStep = 'registering' | 'verifying' | 'retiring';

/** A rotation under way (one per tenant at most): endpoint ids only, never a secret. */
export interface TenantRotationRecord {
  tenantId: string;
  step: TenantRotationStep;
  /** The endpoint being replaced. */
  oldEndpointId: string;
  /** The endpoint replacing it, once registered (`verifying` and `retiring`). */
  newEndpointId: string | null;
  startedAt: number;
  updatedAt: number;
}

export interface TenantListRequest {
  /** Only these statuses; all when left out. */
  statuses?: readonly TenantStatus[];
  /** Ids after this one (keyset paging, in id order). */
  after?: string;
  limit: number;
}

export interface TenantStore {
  /** Creates or upgrades the tables; every other method calls it first. */
  migrate(): Promise<void>;
  get(id: string): Promise<TenantRecord | null>;
  /** In id order. */
  list(request: TenantListRequest): Promise<TenantRecord[]>;
  /** Counts by status (for `doctor --tenants`). */
  countByStatus(): Promise<Partial<Record<TenantStatus, number>>>;
  /**
   * Atomically: refuses (writing nothing) when another tenant id that is not `disconnected` has the
   * same merchant and neither may share it, or when this tenant is connected to another merchant;
   * else records the intent: a new or `disconnected` tenant becomes `connecting`; any other keeps its
   * status. The key, scopes and stores are replaced; the key generation grows when `keyChanged`.
   */
  beginConnect(intent: ConnectIntent): Promise<ConnectIntentResult>;
  /** `connecting`, `active` or `key_invalid` → `active`: the endpoint in use, `connectedAt` set once, `keyInvalidAt` cleared. */
  finishConnect(id: string, endpointId: string, at: number): Promise<TenantRecord | null>;
  /** Stores (or replaces) the sealed secret of one of the tenant's endpoints. */
  putSecret(secret: TenantSecretRecord): Promise<void>;
  /** Drops the secret of an endpoint (deleted at the service). */
  deleteSecret(tenantId: string, endpointId: string): Promise<void>;
  /** The tenant's secrets, newest first, each with its `verifiedAt`. */
  secrets(tenantId: string): Promise<TenantSecretRecord[]>;
  /**
   * Records that a receiver verified a delivery with the secret of `endpointId` (the first time
   * only: a later call keeps the first time). Whether this call recorded it; `false` also when the
   * tenant holds no such secret. What a rotation's step 2 waits for.
   */
  markSecretVerified(tenantId: string, endpointId: string, at: number): Promise<boolean>;
  /**
   * A rotation of the tenant's webhook secret began at `since`, or (`null`) ended: kept as
   * {@link TenantRecord.rotatingSince}. Whether the tenant exists.
   */
  setRotating(tenantId: string, since: number | null): Promise<boolean>;
  /**
   * The changes numbered above `after` (at most `limit`, oldest first), for receivers in every
   * process to forget what they cached of those tenants. Every method that puts or drops a secret,
   * changes a status or a rotation adds one, in the same transaction. The store keeps at least the
   * latest {@link SECRET_CHANGES_KEPT}; numbers may commit out of order (Postgres), so a reader
   * asks again a little below its last one.
   */
  secretChanges(after: number, limit: number): Promise<SecretChanges>;
  /**
   * A new key for an `active` or `key_invalid` tenant: it becomes `active`, `keyInvalidAt` is
   * cleared, the generation grows. `null` (nothing written) in any other status.
   */
  replaceKey(replacement: KeyReplacement): Promise<TenantRecord | null>;
  /**
   * `active` → `key_invalid` at `at`, only while the stored key is of `keyGeneration` (a 401 met
   * with a key already replaced changes nothing). Whether it changed the record.
   */
  markKeyInvalid(id: string, keyGeneration: number, at: number): Promise<boolean>;
  /** Any status but `disconnected` → `disconnecting`; `null` for an unknown or disconnected tenant. */
  beginDisconnect(id: string, at: number): Promise<TenantRecord | null>;
  /** `disconnecting` → `disconnected`: the key and every secret erased, the endpoint cleared, a rotation under way dropped. */
  finishDisconnect(id: string, at: number): Promise<TenantRecord | null>;
  /** The tenant's rotation under way, or `null`. */
  rotation(tenantId: string): Promise<TenantRotationRecord | null>;
  /**
   * Records a rotation's start (`registering`, replacing `oldEndpointId`) unless one is already
   * under way for the tenant; returns the one under way either way. A start also sets the tenant's
   * `rotatingSince` and numbers the change (`secretChanges`), in the same transaction.
   */
  beginRotation(tenantId: string, oldEndpointId: string, at: number): Promise<TenantRotationRecord>;
  /** Moves the tenant's rotation to `step` (with the new endpoint from `verifying` on); `null` when none is under way. */
  advanceRotation(tenantId: string, step: TenantRotationStep, newEndpointId: string | null, at: number): Promise<TenantRotationRecord | null>;
  /**
   * The rotation is over: its record goes and `rotatingSince` is cleared (a numbered change), in one
   * transaction. `finishDisconnect` drops a rotation too.
   */
  finishRotation(tenantId: string): Promise<void>;
  /** Every sealed value, in a stable order, after `after` (a cursor made of the last one's tenant and endpoint). */
  sealedValues(after: { tenantId: string; endpointId: string | null } | null, limit: number): Promise<SealedValueRef[]>;
  /** Replaces one sealed value if it is still `previous` (another process may have moved it). */
  reseal(ref: SealedValueRef, next: string): Promise<boolean>;
  /** A small named value of the store's own (the encryption key check). */
  readMeta(name: string): Promise<string | null>;
  writeMeta(name: string, value: string): Promise<void>;
  close(): Promise<void>;
}
