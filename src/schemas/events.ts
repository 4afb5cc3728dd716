import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { OrderSchema, OrderStatusChangeSchema, type Order, type OrderStatusChange } from './order.ts';

/** Spec 6.1: the body of every delivery; `data` depends on `event`. */
export const EventEnvelopeSchema = z.looseObject({
  event: z.string(),
  delivery_id: z.string(),
  /** Epoch seconds. */
  ts: z.number(),
  data: z.unknown(),
});

/** `data` of `webhook.test` (wire assumption). */
export const WebhookTestDataSchema = z.looseObject({ webhook_id: z.string(), message: z.string() });
/** `data` of a `webhook.test` delivery: the endpoint tested and a message. */
export type WebhookTestData = KnownFields<z.infer<typeof WebhookTestDataSchema>>;

/** The `data` schema of each known event; any other event name is an unknown event. */
export const EVENT_DATA_SCHEMAS = {
  'order.created': OrderSchema,
  'order.status_changed': OrderStatusChangeSchema,
  'webhook.test': WebhookTestDataSchema,
} as const;

/** The event names this SDK version types: `order.created`, `order.status_changed`, `webhook.test`. */
export type KnownEventName = keyof typeof EVENT_DATA_SCHEMAS;

interface EventBase<Name, Data> {
  event: Name;
  delivery_id: string;
  ts: number;
  data: Data;
}

/** `order.created`: sent once per order, with the full order (spec 2.7) in `data`. Holds personal data. */
export type OrderCreatedEvent = EventBase<'order.created', Order>;
/** `order.status_changed`: the status summary of spec 2.8 in `data` (no items). */
export type OrderStatusChangedEvent = EventBase<'order.status_changed', OrderStatusChange>;
/** `webhook.test`: sent by `client.webhooks.test(id)`. */
export type WebhookTestEvent = EventBase<'webhook.test', WebhookTestData>;

/**
 * An event name this SDK version does not know (e.g. the planned `stock.changed`), at run time a
 * plain string. A template literal no real name matches, so that `if (event.event === 'order.created')`
 * narrows `data` to the order (`string` would not). Compare an unlisted name with
 * `String(event.event) === 'stock.changed'`, or upgrade the SDK.
 */
export type UnknownEventName = `${string} (unknown event)`;
/** An event this SDK version does not know: answer 2xx and ignore it (spec 6, 9.3). */
export type UnknownWebhookEvent = EventBase<UnknownEventName, unknown>;

/** Every delivery `verifyWebhook` can return, discriminated on `event`. */
export type WebhookEvent = OrderCreatedEvent | OrderStatusChangedEvent | WebhookTestEvent | UnknownWebhookEvent;

/** Whether `name` is an event this SDK version types (see {@link KnownEventName}). */
export function isKnownEventName(name: string): name is KnownEventName {
  return Object.hasOwn(EVENT_DATA_SCHEMAS, name);
}
