import * as z from 'zod/mini';
import { openEnum } from './open-enum.ts';

/** A loyalty customer, named by exactly one of `phone` or `external_id`. Loyalty never creates one. */
export type CustomerRef = { phone: string; external_id?: never } | { external_id: string; phone?: never };

export const LoyaltyProgramSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  points_per_currency: z.number(),
  currency_per_point: z.number(),
});
export type LoyaltyProgram = z.infer<typeof LoyaltyProgramSchema>;

export const LoyaltyCustomerSchema = z.looseObject({
  id: z.string(),
  name: z.nullable(z.string()),
  phone: z.nullable(z.string()),
  external_id: z.nullable(z.string()),
});
export type LoyaltyCustomer = z.infer<typeof LoyaltyCustomerSchema>;

export const LoyaltyBalanceSchema = z.looseObject({
  customer: LoyaltyCustomerSchema,
  points: z.number(),
  program_id: z.string(),
});
export type LoyaltyBalance = z.infer<typeof LoyaltyBalanceSchema>;

export const LoyaltyEntrySchema = z.looseObject({
  id: z.string(),
  type: openEnum(['credit', 'debit', 'redeem']),
  points: z.number(),
  description: z.nullable(z.string()),
  created_at: z.string(),
  idempotency_key: z.nullable(z.string()),
});
export type LoyaltyEntry = z.infer<typeof LoyaltyEntrySchema>;

export const LoyaltyStatementSchema = z.looseObject({
  customer: LoyaltyCustomerSchema,
  points: z.number(),
  entries: z.array(LoyaltyEntrySchema),
});
export type LoyaltyStatement = z.infer<typeof LoyaltyStatementSchema>;

/** Answer of POST /loyalty/points and /loyalty/points/debit: the entry and the new balance in points. */
export const PointsResultSchema = z.looseObject({ entry: LoyaltyEntrySchema, balance: z.number() });
export type PointsResult = z.infer<typeof PointsResultSchema>;

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
export type CouponValidation = z.infer<typeof CouponValidationSchema>;

export const CouponRedemptionSchema = z.looseObject({
  redemption: z.looseObject({ id: z.string(), code: z.string(), discount: z.number(), created_at: z.string() }),
});
export type CouponRedemption = z.infer<typeof CouponRedemptionSchema>;

/** Body of a points credit or debit. `points` is a whole number above 0. */
export type PointsInput = CustomerRef & {
  points: number;
  /** 1–255 characters. Left out, the SDK makes a UUID v4 and reuses it on every retry of the call. */
  idempotency_key?: string;
  description?: string;
  order_id?: string;
  store_id?: string;
};

export type ValidateCouponInput = { code: string; store_id?: string; order_total?: number } & (CustomerRef | { phone?: never; external_id?: never });

export type RedeemCouponInput = CustomerRef & {
  code: string;
  store_id: string;
  idempotency_key?: string;
  order_id?: string;
};
