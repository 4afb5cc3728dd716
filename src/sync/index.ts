/**
 * `integration-sdk/sync`: the delta sync. It remembers, per item, a fingerprint of what the service
 * acknowledged, and sends only what differs. State stores: `integration-sdk/sync/sqlite` and
 * `integration-sdk/sync/postgres`.
 */
export { createSync } from './create-sync.ts';
export { SyncLeaseLostError, SyncRunInProgressError } from './errors.ts';
export { syncStateConformance, type SyncConformanceTestApi } from './conformance.ts';
export { FINGERPRINT_RULES_VERSION } from './fingerprint.ts';
export type {
  CatalogSyncResult,
  CreateSyncOptions,
  DeactivateResult,
  StockSyncResult,
  Sync,
  SyncOrphan,
  SyncProgress,
  SyncRunError,
  SyncRunOptions,
  SyncRunRecord,
} from './types.ts';
export type {
  AcknowledgedItem,
  FinishedSyncRun,
  LeaseHolder,
  NewSyncRun,
  OrphanRow,
  RunErrorItem,
  SeenMark,
  StoredItem,
  StoredSyncRun,
  SyncCounts,
  SyncKind,
  SyncRunOutcome,
  SyncState,
} from './state.ts';
