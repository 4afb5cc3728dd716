/** Rows of the tenants tables as both shipped stores read them, and the record made of one. */
import type { SealedValueRef, TenantRecord, TenantRotationRecord, TenantRotationStep, TenantSecretRecord, TenantStatus } from './store.ts';

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

/** One sealed value as `sealedValues` lists them: the key (endpoint `''` in the cursor order) then each secret. */
export interface SealedRow {
  tenant_id: string;
  endpoint_id: string;
  sealed: string;
}

export function sealedFromRow(row: SealedRow): SealedValueRef {
  return { tenantId: row.tenant_id, endpointId: row.endpoint_id === '' ? null : row.endpoint_id, sealed: row.sealed };
}

/** The cursor of `sealedValues` as two sortable texts: the API key sorts before its tenant's secrets. */
export function sealedCursor(after: { tenantId: string; endpointId: string | null } | null): [string, string] {
  return after === null ? ['', ''] : [after.tenantId, after.endpointId ?? ''];
}

export const ROTATION_COLUMNS = 'tenant_id, step, old_endpoint_id, new_endpoint_id, started_at, updated_at';

export interface RotationRow {
  tenant_id: string;
  step: string;
  old_endpoint_id: string;
  new_endpoint_id: string | null;
  started_at: number | string;
  updated_at: number | string;
}

export function rotationFromRow(row: RotationRow): TenantRotationRecord {
  return {
    tenantId: row.tenant_id,
    step: row.step as TenantRotationStep,
    oldEndpointId: row.old_endpoint_id,
    newEndpointId: row.new_endpoint_id,
    startedAt: Number(row.started_at),
    updatedAt: Number(row.updated_at),
  };
}
