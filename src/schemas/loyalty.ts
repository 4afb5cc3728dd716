import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';
import { openEnum } from './open-enum.ts';

/** A loyalty customer, named by exactly one of `phone` or `external_id`. Loyalty never creates one. */
export type CustomerRef = { phone: string; external_id?: never } | { external_id: string; phone?: never };

/** Wire shape of GET /loyalty/program (wire assumption). */
export const LoyaltyProgramSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  points_per_currency: z.number(),
  currency_per_point: z.number(),
});
/** The merchant's loyalty program, from `client.loyalty.program()`. */
export type LoyaltyProgram = KnownFields<z.infer<typeof LoyaltyProgramSchema>>;

/** A loyalty customer as the loyalty answers show it. */
export const LoyaltyCustomerSchema = z.looseObject({
  id: z.string(),
  name: z.nullable(z.string()),
  phone: z.nullable(z.string()),
  external_id: z.nullable(z.string()),
});
/** A loyalty customer: `{ id, name, phone, external_id }` (personal data). */
export type LoyaltyCustomer = KnownFields<z.infer<typeof LoyaltyCustomerSchema>>;

/** Wire shape of GET /loyalty/balance (wire assumption). */
export const LoyaltyBalanceSchema = z.looseObject({
  customer: LoyaltyCustomerSchema,
  points: z.number(),
  program_id: z.string(),
});
/** A customer's balance, from `client.loyalty.balance(customer)`. */
export type LoyaltyBalance = KnownFields<z.infer<typeof LoyaltyBalanceSchema>>;

/** One entry of a statement or a points write (wire assumption). */
export const LoyaltyEntrySchema = z.looseObject({
  id: z.string(),
  type: openEnum(['credit', 'debit', 'redeem']),
  points: z.number(),
  description: z.nullable(z.string()),
  created_at: z.string(),
  idempotency_key: z.nullable(z.string()),
});
/** One points movement: `type` is `credit`, `debit`, `redeem` or a newer value. */
export type LoyaltyEntry = KnownFields<z.infer<typeof LoyaltyEntrySchema>>;

/** Wire shape of GET /loyalty/statement (wire assumption). */
export const LoyaltyStatementSchema = z.looseObject({
  customer: LoyaltyCustomerSchema,
  points: z.number(),
  entries: z.array(LoyaltyEntrySchema),
});
/** Balance and entries, newest first, from `client.loyalty.statement(customer)`. */
export type LoyaltyStatement = KnownFields<z.infer<typeof LoyaltyStatementSchema>>;

/** Answer of POST /loyalty/points and /loyalty/points/debit: the entry and the new balance in points. */
export const PointsResultSchema = z.looseObject({ entry: LoyaltyEntrySchema, balance: z.number() });
/** Answer of `credit` / `debit`: the entry written (or found again by its `idempotency_key`) and the new balance. */
export type PointsResult = KnownFields<z.infer<typeof PointsResultSchema>>;

/** Wire shape of POST /loyalty/coupons/validate (wire assumption). */
export const CouponValidationSchema = z.looseObject({
  valid: z.boolean(),
  coupon: z.looseObject({
    code: z.string(),
    type: openEnum(['percent', 'fixed']),
    value: z.number(),
    expires_at: z.nullable(z.string()),
  }),
  discount: z.number(),
});
/** Answer of `client.loyalty.validateCoupon(input)`: the coupon and the discount it would give. */
export type CouponValidation = KnownFields<z.infer<typeof CouponValidationSchema>>;

/** Wire shape of POST /loyalty/coupons/redeem (wire assumption). */
export const CouponRedemptionSchema = z.looseObject({
  redemption: z.looseObject({ id: z.string(), code: z.string(), discount: z.number(), created_at: z.string() }),
});
/** Answer of `client.loyalty.redeemCoupon(input)`. */
export type CouponRedemption = KnownFields<z.infer<typeof CouponRedemptionSchema>>;

/** Body of a points credit or debit. `points` is a whole number above 0. */
export type PointsInput = CustomerRef & {
  points: number;
  /** 1–255 characters. Left out, the SDK makes a UUID v4 and reuses it on every retry of the call. */
  idempotency_key?: string;
  description?: string;
  order_id?: string;
  store_id?: string;
};

/** Body of `client.loyalty.validateCoupon`: the `code`, optionally the customer (one of `phone` / `external_id`), `store_id` and `order_total`. */
export type ValidateCouponInput = { code: string; store_id?: string; order_total?: number } & (CustomerRef | { phone?: never; external_id?: never });

/** Body of `client.loyalty.redeemCoupon`: `code`, the customer, `store_id`, optional `order_id` and `idempotency_key` (made for you when left out). */
export type RedeemCouponInput = CustomerRef & {
  code: string;
  store_id: string;
  idempotency_key?: string;
  order_id?: string;
};
