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

/** `beginConnect` (and `updateKey`): the tenant as `health()` described its key, and the sealed key. */
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
  /** The calling operation, as the owner of the key change it begins or resumes (see {@link TenantStore.beginConnect}). */
  owner: TenantRotationOwner;
  /** The token of a rotation owner known to be gone (its process on this host no longer exists): its lease is taken even unexpired. */
  replacing?: string;
}

/**
 * What `beginConnect` did:
 * - `ok`: wrote the intent; `rotation` is the key change this call now owns (begun or resumed), or
 *   `null` when there is none to run (a new tenant, or the same key);
 * - `key_change_pending`: wrote only the claim of an unfinished key change to the key now stored
 *   (`rotation`, owned by the caller from now on), which must be completed before another key replaces it;
 * - nothing written: another tenant id holds the merchant (`merchant_taken`), the tenant is
 *   connected to another merchant (`merchant_mismatch`), a disconnect of it did not finish
 *   (`disconnecting`), or a rotation of it is under way and its owner's lease holds (`in_progress`).
 */
export type ConnectIntentResult =
  | { outcome: 'ok'; record: TenantRecord; rotation: TenantRotationRecord | null }
  | { outcome: 'key_change_pending'; record: TenantRecord; rotation: TenantRotationRecord }
  | { outcome: 'merchant_taken'; existingTenantId: string }
  | { outcome: 'merchant_mismatch'; merchantId: string }
  | { outcome: 'disconnecting' }
  | { outcome: 'in_progress'; rotation: TenantRotationRecord };

/**
 * A sealed value as `rekey` walks them: the tenant's key, one of its secrets, or the key of an
 * unfinished key change's old endpoint (`retiring`).
 */
export interface SealedValueRef {
  tenantId: string;
  /** `null` for an API key (the tenant's, or with `retiring` the old one); the endpoint id for a webhook secret. */
  endpointId: string | null;
  sealed: string;
  /** The old key a key change keeps until its endpoint is deleted ({@link TenantRotationRecord.retiringKey}). */
  retiring?: true;
}

/**
 * Where a rotation stands, recorded before each of its external steps so that a second call
 * resumes it:
 * - `registering`: a new endpoint is being registered at the tenant's URL (its secret is stored
 *   as soon as the service answers);
 * - `verifying`: the new endpoint (`newEndpointId`, its secret stored) is sent `webhooks.test`
 *   (for a secret rotation, until a receiver verified it with the new secret);
 * - `retiring`: the tenant's deliveries go to the new endpoint; the old one is being deleted, then its secret.
 */
export type TenantRotationStep = 'registering' | 'verifying' | 'retiring';

/**
 * What a rotation moves the tenant's deliveries for:
 * - `secret`: a new webhook secret (`rotateWebhookSecret`): both endpoints are the tenant key's;
 * - `key`: a new API key (`updateKey`, or `connect` with another key): endpoints belong to the key
 *   that registered them (spec 4.5), so the new endpoint is registered with the new key and the old
 *   one deleted with the old key ({@link TenantRotationRecord.retiringKey}).
 */
export type TenantRotationKind = 'secret' | 'key';

/**
 * Who runs a rotation: one call (its `token`), in a process (`host`, `pid`), whose lease holds until
 * `leaseUntil` and is renewed while it runs. Another call takes it over once the lease expired, or
 * at once when the process on this host is gone.
 */
export interface TenantRotationOwner {
  token: string;
  host: string;
  pid: number;
  leaseUntil: number;
}

/** A rotation under way (one per tenant at most): endpoint ids, and the old key sealed, never in clear. */
export interface TenantRotationRecord {
  tenantId: string;
  kind: TenantRotationKind;
  step: TenantRotationStep;
  /** The endpoint being replaced (`''` when a key change found none recorded: a connect that never finished). */
  oldEndpointId: string;
  /** The endpoint replacing it, once registered (`verifying` and `retiring`). */
  newEndpointId: string | null;
  /**
   * `kind: 'key'`: the old API key, sealed as the tenant's key is, kept to delete the old key's
   * endpoints; `null` when that key was already refused (`key_invalid`: its endpoints deliver
   * nothing, and it is never sent again). Always `null` for a secret rotation.
   */
  retiringKey: string | null;
  /** The call running it; `null` once that call stopped (a failure), for the next call to take. */
  owner: TenantRotationOwner | null;
  startedAt: number;
  updatedAt: number;
}

/** `claimRotation`: the caller's ownership, and a gone owner it may replace. */
export interface RotationClaim {
  owner: TenantRotationOwner;
  at: number;
  /** The token of an owner known to be gone (its process on this host no longer exists). */
  replacing?: string;
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
   * Atomically, in this order: refuses (writing nothing) when this tenant is connected to another
   * merchant, when another tenant id that is not `disconnected` has the same merchant and neither
   * may share it, when the tenant is `disconnecting`, or when a rotation of it is under way whose
   * owner is another call with an unexpired lease (unless `replacing` names it). Then:
   * - a new or `disconnected` tenant becomes `connecting`;
   * - a new key (`keyChanged`) for any other tenant begins a key change (a `key` rotation at
   *   `registering`, owned by `intent.owner`, the tenant `rotatingSince`), keeping the old key sealed
   *   as its `retiringKey` (`null` if it was `key_invalid`) and its endpoint as `oldEndpointId`; a
   *   rotation under way is folded into it (a secret rotation's endpoints are the old key's; a key
   *   change's retiring key stays when the key it was changing to is `key_invalid`). When that key
   *   is not known invalid, the unfinished key change is claimed instead and `key_change_pending`
   *   returned, nothing else written. A `key_invalid` tenant becomes `active` (or `connecting`
   *   if it never finished connecting), `keyInvalidAt` cleared;
   * - the same key keeps the status, and an unfinished key change is claimed and returned.
   * The key, scopes and stores are replaced; the key generation grows when `keyChanged`.
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
   * `active` or `connecting` → `key_invalid` at `at`, only while the stored key is of
   * `keyGeneration` (a 401 met with a key already replaced changes nothing). Whether it changed the
   * record (a numbered change when it did).
   */
  markKeyInvalid(id: string, keyGeneration: number, at: number): Promise<boolean>;
  /** Any status but `disconnected` → `disconnecting`; `null` for an unknown or disconnected tenant. */
  beginDisconnect(id: string, at: number): Promise<TenantRecord | null>;
  /** `disconnecting` → `disconnected`: the key and every secret erased, the endpoint cleared, a rotation under way dropped. */
  finishDisconnect(id: string, at: number): Promise<TenantRecord | null>;
  /** The tenant's rotation under way, or `null`. */
  rotation(tenantId: string): Promise<TenantRotationRecord | null>;
  /**
   * Records the start of a secret rotation (`registering`, replacing `oldEndpointId`, owned by
   * `owner`) unless one is already under way for the tenant; returns the one under way either way
   * (compare its owner's token). A start also sets the tenant's `rotatingSince` and numbers the
   * change (`secretChanges`), in the same transaction.
   */
  beginRotation(tenantId: string, oldEndpointId: string, at: number, owner: TenantRotationOwner): Promise<TenantRotationRecord>;
  /**
   * Takes the rotation under way for `claim.owner` when it has no owner, its owner's lease ended
   * (`leaseUntil` ≤ `at`), its owner is the same token, or its owner's token is `claim.replacing`.
   * Returns the rotation as it is afterwards (its owner says who holds it), or `null` when none is under way.
   */
  claimRotation(tenantId: string, claim: RotationClaim): Promise<TenantRotationRecord | null>;
  /** Extends the lease of the rotation's owner `token` to `leaseUntil`; `false` when it no longer owns it. */
  renewRotation(tenantId: string, token: string, leaseUntil: number): Promise<boolean>;
  /** The owner `token` stops (a failure): the rotation stays, without an owner, for the next call. */
  releaseRotation(tenantId: string, token: string): Promise<void>;
  /**
   * Moves the tenant's rotation to `step` (with the new endpoint from `verifying` on), if `token`
   * owns it; `null` when none is under way or another call owns it.
   */
  advanceRotation(tenantId: string, step: TenantRotationStep, newEndpointId: string | null, at: number, token: string): Promise<TenantRotationRecord | null>;
  /**
   * The rotation owned by `token` is over: its record goes and `rotatingSince` is cleared (a
   * numbered change), in one transaction. Whether it was `token`'s. `finishDisconnect` drops a rotation too.
   */
  finishRotation(tenantId: string, token: string): Promise<boolean>;
  /** Every sealed value (keys, secrets, retiring keys), in a stable order, after `after` (the last one returned). */
  sealedValues(after: SealedValueRef | null, limit: number): Promise<SealedValueRef[]>;
  /** Replaces one sealed value if it is still `previous` (another process may have moved it). */
  reseal(ref: SealedValueRef, next: string): Promise<boolean>;
  /** A small named value of the store's own (the encryption key check). */
  readMeta(name: string): Promise<string | null>;
  writeMeta(name: string, value: string): Promise<void>;
  close(): Promise<void>;
}
