/**
 * `integration-sdk`: the Integration API v1 client, every error class, every public type, and the
 * webhook helpers of `integration-sdk/webhooks` re-exported (same classes, same functions).
 */
export { IntegrationClient, type IntegrationClientOptions, type RawRequest } from './client.ts';
export { VERSION } from './version.ts';

export * from './errors/index.ts';
export * from './schemas/index.ts';

export type { CallOptions, RetryMode, HttpMethod, RequestSpec, Requester } from './transport/types.ts';
export { PauseOutlastsDeadline, type RateLimiter, type RateLimiterClient, type AttemptFinished, type AcquireBudget, type TokenBucketOptions } from './transport/rate-limiter.ts';
export type { Logger } from './transport/logger.ts';
export type { Clock } from './clock.ts';

export type { OrdersResource } from './resources/orders.ts';
export type { WebhooksResource, CreateWebhookInput, DeliveriesOptions } from './resources/webhooks.ts';
export type { LoyaltyResource, StatementOptions, WithIdempotencyKey } from './resources/loyalty.ts';
export type { CatalogResource } from './resources/catalog.ts';
export type { StockResource } from './resources/stock.ts';
export type {
  BulkInput,
  BulkOptions,
  BulkProgress,
  BulkUpsertResult,
  BulkUpsertSummary,
  BatchResult,
  StockOptions,
  StockProgress,
  StockResult,
  StockSummary,
  StockBatchResult,
} from './resources/bulk/types.ts';

export { verifyWebhook, verifyWebhookAsync, signWebhook, createWebhookHandler } from './webhooks/index.ts';
export type {
  VerifyWebhookOptions,
  WebhookRawBody,
  WebhookHeaders,
  WebhookSecret,
  SignWebhookOptions,
  SignedWebhook,
  SignedWebhookHeaders,
  WebhookPayload,
  KnownWebhookEvent,
  NodeRequestLike,
  NodeResponseLike,
  NodeWebhookListener,
  WebhookHandler,
  WebhookHandlerOptions,
} from './webhooks/index.ts';
