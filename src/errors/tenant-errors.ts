import { IntegrationError } from './integration-error.ts';

/**
 * A tenant's API key was refused with 401 `INVALID_API_KEY` (the merchant revoked or rotated it):
 * the tenant is `key_invalid`, and every call of its client fails at once with this error, sending
 * nothing, in every process sharing the tenants store, until `tenants.updateKey(tenantId, newKey)`.
 * The call that met the 401 throws it too, with the `AuthenticationError` as `cause` (a bulk write
 * throws `BulkOperationError` whose `cause` is this error, as for any batch that fails).
 *
 * @example
 * ```ts
 * try {
 *   await tenants.client('loja-42').orders.get(orderId);
 * } catch (error) {
 *   if (error instanceof TenantKeyInvalidError) await askMerchantForANewKey(error.tenantId);
 * }
 * ```
 */
export class TenantKeyInvalidError extends IntegrationError {
  static override readonly errorName: string = 'TenantKeyInvalidError';
  /** The tenant whose key was refused. */
  readonly tenantId: string;
  /** When the key was found invalid (ISO 8601), as on the tenant's record; `null` when not known. */
  readonly keyInvalidAt: string | null;

  constructor(tenantId: string, keyInvalidAt: string | null, options?: { cause?: unknown }) {
    super(
      `tenant ${JSON.stringify(tenantId)}: its API key was refused (401 INVALID_API_KEY${keyInvalidAt ? ` at ${keyInvalidAt}` : ''}); ` +
        `no request is sent with it until tenants.updateKey(${JSON.stringify(tenantId)}, newKey)`,
      options,
    );
    this.tenantId = tenantId;
    this.keyInvalidAt = keyInvalidAt;
  }
}

/**
 * No connected tenant has this id: it was never connected (`reason: 'unknown'`), or it was
 * disconnected (`'disconnected'`, also while a disconnect is under way). Nothing was sent.
 *
 * @example
 * ```ts
 * try {
 *   await tenants.updateKey('loja-43', key);
 * } catch (error) {
 *   if (error instanceof TenantNotFoundError) console.log(error.tenantId, error.reason);
 * }
 * ```
 */
export class TenantNotFoundError extends IntegrationError {
  static override readonly errorName: string = 'TenantNotFoundError';
  readonly tenantId: string;
  readonly reason: 'unknown' | 'disconnected';

  constructor(tenantId: string, reason: 'unknown' | 'disconnected') {
    super(
      reason === 'unknown'
        ? `no tenant ${JSON.stringify(tenantId)}: connect it first with tenants.connect(${JSON.stringify(tenantId)}, { apiKey })`
        : `tenant ${JSON.stringify(tenantId)} is disconnected (its credentials were erased): connect it again with tenants.connect(${JSON.stringify(tenantId)}, { apiKey })`,
    );
    this.tenantId = tenantId;
    this.reason = reason;
  }
}

/** Why `tenants.connect` (or `updateKey`) refused a key; see {@link TenantConnectError}. */
export type TenantConnectFailure = 'missing_scopes' | 'merchant_taken' | 'merchant_mismatch' | 'endpoint_limit' | 'disconnecting';

/** An endpoint of the key's integration that is not this tenant's (named when the limit is reached). */
export interface ForeignEndpoint {
  id: string;
  url: string;
}

/**
 * `tenants.connect` or `tenants.updateKey` refused, naming the rule (`reason`):
 * - `missing_scopes`: the key lacks a scope the integration needs (`missingScopes`); nothing was written;
 * - `merchant_taken`: another tenant id (`existingTenantId`) holds this merchant's credentials;
 *   pass `{ allowSameMerchant: true }` for a second key of one merchant (a test-store key); nothing was written;
 * - `merchant_mismatch`: the key belongs to another merchant than the tenant's; nothing was written;
 * - `endpoint_limit`: the integration already has 5 endpoints; `foreignEndpoints` lists those that
 *   are not this tenant's (delete one of them, then connect again);
 * - `disconnecting`: a disconnect of the tenant did not finish; call `tenants.disconnect(id)` to
 *   complete it, then connect; nothing was sent or written.
 *
 * @example
 * ```ts
 * try {
 *   await tenants.connect('loja-42', { apiKey });
 * } catch (error) {
 *   if (error instanceof TenantConnectError && error.reason === 'missing_scopes') console.log(error.missingScopes);
 * }
 * ```
 */
export class TenantConnectError extends IntegrationError {
  static override readonly errorName: string = 'TenantConnectError';
  readonly tenantId: string;
  readonly reason: TenantConnectFailure;
  /** `missing_scopes`: the scopes the integration needs that the key lacks. */
  readonly missingScopes: string[];
  /** `merchant_taken`: the tenant that already holds this merchant. */
  readonly existingTenantId: string | null;
  /** `endpoint_limit`: the integration's endpoints that are not this tenant's. */
  readonly foreignEndpoints: ForeignEndpoint[];

  constructor(
    tenantId: string,
    reason: TenantConnectFailure,
    message: string,
    extra: { missingScopes?: string[]; existingTenantId?: string; foreignEndpoints?: ForeignEndpoint[]; cause?: unknown } = {},
  ) {
    super(`tenant ${JSON.stringify(tenantId)}: ${message}`, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.tenantId = tenantId;
    this.reason = reason;
    this.missingScopes = extra.missingScopes ?? [];
    this.existingTenantId = extra.existingTenantId ?? null;
    this.foreignEndpoints = extra.foreignEndpoints ?? [];
  }
}

/** Why `tenants.rotateWebhookSecret` stopped; see {@link TenantRotationError}. */
export type TenantRotationFailure = 'endpoint_limit' | 'not_verified' | 'in_progress';

/**
 * `tenants.rotateWebhookSecret` stopped, naming the rule (`reason`); what it did so far is
 * recorded, and calling it again resumes from there:
 * - `endpoint_limit`: the integration already has 5 endpoints, so the second endpoint of the
 *   rotation has no slot; `endpoints` names every one of them (id and URL without its query),
 *   the tenant's own included. Delete one that is not in use, then call it again;
 * - `not_verified`: no receiver verified a test delivery with the new secret in time (and the
 *   service's delivery log did not show it delivered); both endpoints stay (the inbox runs each
 *   event once), `newEndpointId` is the new one. Fix the receiver, then call it again;
 * - `in_progress`: another call (in this or another process) is running a rotation of this tenant
 *   (a secret rotation, or the key change of `updateKey` or `connect` with another key) and its
 *   lease holds: nothing was done. Call again once it ended; a rotation whose process died is
 *   taken over at once on the same host, else when its lease ends (a minute at most). `connect`,
 *   `updateKey` and `disconnect` refuse with it too while such a call runs.
 *
 * @example
 * ```ts
 * try {
 *   await tenants.rotateWebhookSecret('loja-42');
 * } catch (error) {
 *   if (error instanceof TenantRotationError && error.reason === 'endpoint_limit') console.log(error.endpoints);
 * }
 * ```
 */
export class TenantRotationError extends IntegrationError {
  static override readonly errorName: string = 'TenantRotationError';
  readonly tenantId: string;
  readonly reason: TenantRotationFailure;
  /** `endpoint_limit`: the endpoints that hold the integration's slots. */
  readonly endpoints: ForeignEndpoint[];
  /** `not_verified`: the endpoint registered by the rotation, which stays until it completes. */
  readonly newEndpointId: string | null;

  constructor(tenantId: string, reason: TenantRotationFailure, message: string, extra: { endpoints?: ForeignEndpoint[]; newEndpointId?: string; cause?: unknown } = {}) {
    super(`tenant ${JSON.stringify(tenantId)}: ${message}`, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.tenantId = tenantId;
    this.reason = reason;
    this.endpoints = extra.endpoints ?? [];
    this.newEndpointId = extra.newEndpointId ?? null;
  }
}
