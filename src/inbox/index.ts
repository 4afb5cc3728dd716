/**
 * `integration-sdk/inbox`: a durable webhook inbox. The receiver verifies each delivery, stores it
 * under its delivery id and only then answers 2xx; workers in any process sharing the store run each
 * event at least once, one event of an order at a time, with retries and dead letters. Stores live
 * in their own entries (`integration-sdk/inbox/sqlite`, `integration-sdk/inbox/postgres`) so that
 * a driver loads only when imported.
 */
export { createInbox, type Inbox, type InboxOptions, type PurgeOptions, type TenantOption } from './create-inbox.ts';
export type { TenantRequest } from './delivery-secrets.ts';
export type { TenantReconcileFailure, TenantReconcileReport, TenantsReconcileOptions, TenantsReconcileReport } from './reconcile-tenants.ts';
export { MAX_BODY_BYTES, type InboxHandler } from './receive.ts';
export {
  defaultRetryDelayMs,
  type InboxEventHandler,
  type InboxEventHandlers,
  type InboxHandlerContext,
  type InboxWorker,
  type OrderReader,
  type StartWorkerOptions,
} from './worker.ts';
export type {
  ClaimRequest,
  FailRequest,
  InboxEntry,
  InboxEntryStatus,
  InboxEntryWithPayload,
  InboxOrderState,
  InboxAction,
  InboxActivityBucket,
  InboxActivityRequest,
  InboxHeartbeat,
  InboxPageRequest,
  InboxWorkerSeen,
  InboxStats,
  InboxStore,
  InsertOptions,
  EndMissedRequest,
  MissedDelivery,
  MissedEnding,
  MissedRecord,
  NewInboxEntry,
  PurgePreview,
  PurgePreviewRequest,
  PurgeRequest,
  ReconcileRecord,
  StaleOrdersRequest,
  TenantFilter,
} from './store.ts';
export { PAIR_WINDOW_MS } from './store.ts';
export { type OtherEndpoint, type ReconcileClient, type ReconcileOptions, type ReconcileReport } from './reconcile.ts';
export { inboxStoreConformance, type ConformanceTestApi } from './conformance.ts';
