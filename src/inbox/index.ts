/**
 * `integration-sdk/inbox`: a durable inbox for the service's webhooks. Stores live in their own
 * entries (`integration-sdk/inbox/sqlite`, `integration-sdk/inbox/postgres`) so that a driver
 * loads only when imported; this entry imports no HTTP client and no database driver.
 */
export { createInbox, type Inbox, type InboxHandler, type InboxOptions } from './create-inbox.ts';
export type { InboxWorker, InboxHandlers, InboxHandlerContext, InboxEvent, StartWorkerOptions } from './worker.ts';
export type { InboxStore, InboxStatus, InboxStats, InboxEntry, NewDelivery, ClaimedEntry, ClaimOptions } from './types.ts';
