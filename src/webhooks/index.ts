/**
 * `integration-sdk/webhooks`: verify, sign and receive the service's signed deliveries (spec 6).
 * Small on purpose, and free of `node:*` imports so that it loads on edge runtimes: it pulls in no
 * HTTP client, only zod/mini for the event schemas.
 */
export { verifyWebhook, verifyWebhookAsync } from './verify-webhook.ts';
export { signWebhook } from './sign-webhook.ts';
export { createWebhookHandler } from './receiver.ts';
export { WebhookVerificationError, type WebhookVerificationReason } from '../errors/webhook-verification-error.ts';
export { BodyLimitError } from '../bounded-body.ts';

export type { VerifyWebhookOptions, WebhookRawBody } from './verification-steps.ts';
export type { WebhookHeaders, WebhookSecret } from './signature.ts';
export type { SignWebhookOptions, SignedWebhook, SignedWebhookHeaders, WebhookPayload } from './sign-webhook.ts';
export type {
  KnownWebhookEvent,
  NodeRequestLike,
  NodeResponseLike,
  NodeWebhookListener,
  WebhookHandler,
  WebhookHandlerOptions,
} from './receiver.ts';
export type {
  WebhookEvent,
  OrderCreatedEvent,
  OrderStatusChangedEvent,
  WebhookTestEvent,
  UnknownWebhookEvent,
  UnknownEventName,
  WebhookTestData,
} from '../schemas/events.ts';
export type { Order, OrderStatusChange } from '../schemas/order.ts';
