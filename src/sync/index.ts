/**
 * `integration-sdk/sync`: the delta sync. It remembers, per item, a fingerprint of what the service
 * acknowledged, and sends only what differs. State stores: `integration-sdk/sync/sqlite` and
 * `integration-sdk/sync/postgres`.
 */
export { createSync } from './create-sync.ts';
export { SyncGuardError, SyncLeaseLostError, SyncRunInProgressError, type SyncGuardReason } from './errors.ts';
export { SyncStateError } from './state-errors.ts';
export { syncStateConformance, type SyncConformanceTestApi } from './conformance.ts';
export { FINGERPRINT_RULES_VERSION } from './fingerprint.ts';
export type {
  CatalogSyncResult,
  CreateSyncOptions,
  DeactivateOptions,
  DeactivateResult,
  StockSyncResult,
  Sync,
  SyncOrphan,
  SyncProgress,
  SyncRunError,
  SyncRunOptions,
  SyncRunRecord,
} from './types.ts';
export { OVERWRITTEN } from './state.ts';
export type {
  AcknowledgedItem,
  InFlightItem,
  FinishedSyncRun,
  LeaseHolder,
  NewSyncRun,
  OrphanRow,
  RunErrorItem,
  SeenMark,
  StoredItem,
  StockPair,
  StoredSyncRun,
  SyncCounts,
  SyncKind,
  SyncRunOutcome,
  SyncState,
} from './state.ts';
