import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { openEnum } from './open-enum.ts';

/** Event names a webhook endpoint can subscribe to (wire assumption: others are rejected at registration). */
export type SubscribableEvent = 'order.created' | 'order.status_changed';

/** 201 answer of POST /webhooks: the only time `secret` is ever shown. */
export const CreatedWebhookSchema = z.looseObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  /** `whsec_...`; not recoverable later: store it now. */
  secret: z.string(),
  warning: z.string(),
  created_at: z.string(),
});
/** Answer of `client.webhooks.create`: the endpoint and its `secret`, shown this once. */
export type CreatedWebhook = KnownFields<z.infer<typeof CreatedWebhookSchema>>;

/** One element of GET /webhooks (never a secret). */
export const WebhookEndpointSchema = z.looseObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  /** Failures in a row; back to 0 at the first success, a test delivery included. */
  consecutive_failures: z.number(),
  created_at: z.string(),
});
/** A registered endpoint, from `client.webhooks.list()` (never its secret). */
export type WebhookEndpoint = KnownFields<z.infer<typeof WebhookEndpointSchema>>;

/** Wire shape of GET /webhooks: `{ data: WebhookEndpoint[] }`. */
export const WebhookEndpointListSchema = z.looseObject({ data: z.array(WebhookEndpointSchema) });

/** Delivery `status`: the known values plus any other string. */
export const DeliveryStatusSchema = openEnum(['pending', 'retrying', 'delivered', 'dead']);
/** A delivery's state: `pending`, `retrying`, `delivered`, `dead`, or a newer value. */
export type DeliveryStatus = z.infer<typeof DeliveryStatusSchema>;

/** Spec 2.6 plus the wire assumption's fields; never the payload. */
export const WebhookDeliverySchema = z.looseObject({
  id: z.string(),
  event: z.string(),
  status: DeliveryStatusSchema,
  attempt_count: z.number(),
  response_status: z.nullable(z.number()),
  last_error: z.nullable(z.string()),
  created_at: z.string(),
  next_attempt_at: z.nullable(z.string()),
});
/** One record of the delivery log, from `client.webhooks.deliveries(id)`; never the payload. */
export type WebhookDelivery = KnownFields<z.infer<typeof WebhookDeliverySchema>>;

/** Wire shape of GET /webhooks/{id}/deliveries: `{ data: WebhookDelivery[] }`. */
export const WebhookDeliveryListSchema = z.looseObject({ data: z.array(WebhookDeliverySchema) });

/** 202 answer of POST /webhooks/{id}/test. */
export const WebhookTestResultSchema = z.looseObject({ delivery_id: z.string() });
/** Answer of `client.webhooks.test(id)`: the id of the `webhook.test` delivery. */
export type WebhookTestResult = KnownFields<z.infer<typeof WebhookTestResultSchema>>;
