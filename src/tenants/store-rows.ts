/** Rows of the tenants tables as both shipped stores read them, and the record made of one. */
import type { SealedValueRef, TenantRecord, TenantRotationKind, TenantRotationRecord, TenantRotationStep, TenantSecretRecord, TenantStatus } from './store.ts';

export const TENANT_COLUMNS =
  'id, merchant_id, store_ids, scopes, status, api_key, key_generation, endpoint_id, allow_same_merchant, connected_at, key_invalid_at, disconnected_at, updated_at, rotating_since';

export interface TenantRow {
  id: string;
  merchant_id: string;
  /** JSON text (SQLite) or an array (Postgres). */
  store_ids: string | string[];
  scopes: string | string[];
  status: string;
  api_key: string | null;
  key_generation: number | string;
  endpoint_id: string | null;
  allow_same_merchant: number | boolean;
  connected_at: number | string | null;
  key_invalid_at: number | string | null;
  disconnected_at: number | string | null;
  updated_at: number | string;
  rotating_since: number | string | null;
}

const list = (value: string | string[]): string[] => (Array.isArray(value) ? value : (JSON.parse(value) as string[]));
const time = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function recordFromRow(row: TenantRow): TenantRecord {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeIds: list(row.store_ids),
    scopes: list(row.scopes),
    status: row.status as TenantStatus,
    apiKey: row.api_key,
    keyGeneration: Number(row.key_generation),
    endpointId: row.endpoint_id,
    allowSameMerchant: row.allow_same_merchant === true || Number(row.allow_same_merchant) === 1,
    connectedAt: time(row.connected_at),
    keyInvalidAt: time(row.key_invalid_at),
    disconnectedAt: time(row.disconnected_at),
    updatedAt: Number(row.updated_at),
    rotatingSince: time(row.rotating_since),
  };
}

export interface SecretRow {
  tenant_id: string;
  endpoint_id: string;
  secret: string;
  created_at: number | string;
  verified_at: number | string | null;
}

export const SECRET_COLUMNS = 'tenant_id, endpoint_id, secret, created_at, verified_at';

export function secretFromRow(row: SecretRow): TenantSecretRecord {
  return { tenantId: row.tenant_id, endpointId: row.endpoint_id, secret: row.secret, createdAt: Number(row.created_at), verifiedAt: time(row.verified_at) };
}

/**
 * One sealed value as `sealedValues` lists them, in (tenant, place) order: the key (place `''`),
 * the retiring key of a key change (place {@link RETIRING_PLACE}), then each secret (its endpoint id).
 */
export interface SealedRow {
  tenant_id: string;
  endpoint_id: string;
  sealed: string;
}

/** The place of a retiring key in the order of `sealedValues`: after the key, before any endpoint id. */
export const RETIRING_PLACE = '\u0001';

export function sealedFromRow(row: SealedRow): SealedValueRef {
  if (row.endpoint_id === RETIRING_PLACE) return { tenantId: row.tenant_id, endpointId: null, sealed: row.sealed, retiring: true };
  return { tenantId: row.tenant_id, endpointId: row.endpoint_id === '' ? null : row.endpoint_id, sealed: row.sealed };
}

/** The cursor of `sealedValues` as two sortable texts (tenant, place). */
export function sealedCursor(after: SealedValueRef | null): [string, string] {
  if (after === null) return ['', ''];
  return [after.tenantId, after.retiring ? RETIRING_PLACE : (after.endpointId ?? '')];
}

export const ROTATION_COLUMNS = 'tenant_id, kind, step, old_endpoint_id, new_endpoint_id, retiring_key, owner_token, owner_host, owner_pid, lease_until, started_at, updated_at';

export interface RotationRow {
  tenant_id: string;
  kind: string;
  step: string;
  old_endpoint_id: string;
  new_endpoint_id: string | null;
  retiring_key: string | null;
  owner_token: string | null;
  owner_host: string | null;
  owner_pid: number | string | null;
  lease_until: number | string | null;
  started_at: number | string;
  updated_at: number | string;
}

export function rotationFromRow(row: RotationRow): TenantRotationRecord {
  return {
    tenantId: row.tenant_id,
    kind: row.kind as TenantRotationKind,
    step: row.step as TenantRotationStep,
    oldEndpointId: row.old_endpoint_id,
    newEndpointId: row.new_endpoint_id,
    retiringKey: row.retiring_key,
    owner:
      row.owner_token === null
        ? null
        : { token: row.owner_token, host: row.owner_host ?? '', pid: Number(row.owner_pid ?? 0), leaseUntil: Number(row.lease_until ?? 0) },
    startedAt: Number(row.started_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Whether a claim may take a rotation from its owner (see `TenantStore.claimRotation`). */
export function mayTake(owner: TenantRotationRecord['owner'], claim: { owner: { token: string }; at: number; replacing?: string }): boolean {
  return owner === null || owner.leaseUntil <= claim.at || owner.token === claim.owner.token || (claim.replacing !== undefined && owner.token === claim.replacing);
}
