/**
 * `integration-sdk/tenants`: many merchants, one integration. A registry of tenants (one merchant's
 * credentials each, sealed at rest), their clients sharing one egress budget, and their webhook
 * endpoints. Stores live in their own entries (`integration-sdk/tenants/sqlite`,
 * `integration-sdk/tenants/postgres`) so that a driver loads only when imported.
 */
export { createTenants } from './create-tenants.ts';
export type { ConnectInput, CreateTenantsOptions, DisconnectResult, EncryptionKeyOption, ListTenantsOptions, RekeyResult, Tenant, Tenants } from './types.ts';
export { tenantIdProblem, MAX_TENANT_ID_LENGTH } from './tenant-id.ts';
export { tenantStoreConformance } from './conformance.ts';
export type { ConformanceTestApi } from '../storage/conformance-api.ts';
export type {
  ConnectIntent,
  ConnectIntentResult,
  RotationClaim,
  SealedValueRef,
  TenantListRequest,
  TenantRecord,
  TenantRotationKind,
  TenantRotationOwner,
  TenantRotationRecord,
  TenantRotationStep,
  SecretChanges,
  TenantSecretRecord,
  TenantStatus,
  TenantStore,
} from './store.ts';
export { SECRET_CHANGES_KEPT } from './store.ts';
export { TenantKeyInvalidError, TenantNotFoundError, TenantConnectError, TenantRotationError, type TenantConnectFailure, type TenantRotationFailure, type ForeignEndpoint } from '../errors/tenant-errors.ts';
