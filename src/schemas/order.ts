import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { openEnum } from './open-enum.ts';

/** Values seen in payloads and used by the sandbox; any other string is accepted. */
export const ORDER_STATUSES = ['pending', 'confirmed', 'preparing', 'dispatched', 'delivered', 'cancelled'] as const;
/** Order `status`: the known values plus any other string. */
export const OrderStatusSchema = openEnum(ORDER_STATUSES);
/** An order status: `pending`, `confirmed`, `preparing`, `dispatched`, `delivered`, `cancelled`, or a value this version does not list. */
export type OrderStatus = z.infer<typeof OrderStatusSchema>;

/** Order `source_channel`: the known values plus any other string. */
export const SourceChannelSchema = openEnum(['catalog', 'whatsapp', 'manual', 'marketplace']);
/** Where an order was born: `catalog`, `whatsapp`, `manual`, `marketplace`, or a newer channel. */
export type SourceChannel = z.infer<typeof SourceChannelSchema>;

/** Spec 2.7 `customer.address`; `complement` may be absent (the delivery address sample has none). */
export const AddressSchema = z.looseObject({
  cep: z.string(),
  street: z.string(),
  number: z.string(),
  complement: z.optional(z.nullable(z.string())),
  neighborhood: z.string(),
  city: z.string(),
  state: z.string(),
});
/** A postal address of spec 2.7 (personal data). */
export type Address = KnownFields<z.infer<typeof AddressSchema>>;

/** One order line of spec 2.7. */
export const OrderItemSchema = z.looseObject({
  external_id: z.string(),
  product_name: z.string(),
  quantity: z.number(),
  unit_price: z.number(),
  variations: z.array(z.looseObject({ name: z.string(), price_modifier: z.number() })),
  addons: z.array(z.looseObject({ name: z.string(), quantity: z.number(), price: z.number() })),
  notes: z.optional(z.nullable(z.string())),
  line_total: z.number(),
});
/** One order line: the product key (`external_id`), quantities, prices, variations and addons. */
export type OrderItem = KnownFields<z.infer<typeof OrderItemSchema>>;

/** Spec 2.7: the full order, as sent in `order.created` and read back by GET /orders. */
export const OrderSchema = z.looseObject({
  order_id: z.string(),
  display_number: z.string(),
  /** Set only for orders born in an external channel with its own id; null for native orders. */
  external_order_id: z.nullable(z.string()),
  source_channel: SourceChannelSchema,
  status: OrderStatusSchema,
  store_id: z.string(),
  created_at: z.string(),
  /** Present on order reads (wire assumption), not in the event. */
  updated_at: z.optional(z.string()),
  customer: z.looseObject({
    name: z.string(),
    phone: z.string(),
    email: z.string(),
    address: AddressSchema,
  }),
  items: z.array(OrderItemSchema),
  delivery: z.looseObject({
    type: openEnum(['delivery', 'pickup']),
    freight_price: z.number(),
    address: z.optional(z.nullable(AddressSchema)),
  }),
  payment: z.looseObject({
    method: openEnum(['pix', 'credit_card', 'debit_card', 'cash']),
    status: openEnum(['pending', 'paid']),
    change_for: z.nullable(z.number()),
  }),
  totals: z.looseObject({ subtotal: z.number(), freight: z.number(), discount: z.number(), total: z.number() }),
  // looseObject, not record(string, unknown): the same verdict on JSON, 0.6 KB less gzipped bundle.
  metadata: z.looseObject({}),
});
/** The full order of spec 2.7 (`updated_at` on reads). Holds personal data in `customer` and `delivery`: do not log it whole. */
export type Order = KnownFields<z.infer<typeof OrderSchema>>;

/** Spec 2.8: the summary sent in `order.status_changed`; it carries no items. */
export const OrderStatusChangeSchema = z.looseObject({
  order_id: z.string(),
  display_number: z.string(),
  external_order_id: z.nullable(z.string()),
  previous_status: OrderStatusSchema,
  status: OrderStatusSchema,
  store_id: z.string(),
});
/** The summary sent with `order.status_changed`: previous and new status, no items. */
export type OrderStatusChange = KnownFields<z.infer<typeof OrderStatusChangeSchema>>;
