import { randomUUID } from 'node:crypto';
import type { CouponRedemption, CouponValidation } from '../../schemas/loyalty.ts';
import type { Clock } from '../../clock.ts';
import { isoAt } from '../clock.ts';
import type { Route, RouteContext } from '../http/route.ts';
import { SandboxError, validationError } from '../http/sandbox-error.ts';
import { findCustomer, readCustomerRef } from '../loyalty/customers.ts';
import { keyCoversStore, type CouponRecord, type SandboxState } from '../state.ts';
import { Checker, isRecord, typeOf } from '../validate.ts';

/** Spec 4.6 coupons; both are POST, so both need loyalty:write. */
export const loyaltyCouponRoutes: Route[] = [
  { method: 'POST', path: '/loyalty/coupons/validate', scope: 'loyalty:write', handler: validate },
  { method: 'POST', path: '/loyalty/coupons/redeem', scope: 'loyalty:write', handler: redeem },
];

function validate({ state, body, services }: RouteContext) {
  const input = readBody(body, false);
  const coupon = usableCoupon(state, services.clock, input.code);
  if (input.ref) findCustomer(state, input.ref);
  const result: CouponValidation = {
    valid: true,
    coupon: { code: coupon.code, type: coupon.type, value: coupon.value, expires_at: coupon.expires_at },
    discount: discountOf(coupon, input.order_total),
  };
  return { status: 200, body: result };
}

function redeem({ state, key, body, services }: RouteContext) {
  const input = readBody(body, true);
  const store_id = input.store_id ?? '';
  if (!keyCoversStore(state, key, store_id)) throw new SandboxError('FORBIDDEN_STORE', `store_id ${store_id} is outside the key's stores.`);
  const replay = state.redemptions.get(input.idempotency_key ?? '');
  if (replay) return { status: 200, body: redemptionBody(replay) };
  const coupon = usableCoupon(state, services.clock, input.code);
  const customer = findCustomer(state, input.ref!);
  const redemption = { id: randomUUID(), code: coupon.code, discount: discountOf(coupon, input.order_total), created_at: isoAt(services.clock), customerId: customer.id, store_id };
  coupon.redemptions += 1;
  state.redemptions.set(input.idempotency_key ?? '', redemption);
  return { status: 200, body: redemptionBody(redemption) };
}

function redemptionBody(r: { id: string; code: string; discount: number; created_at: string }): CouponRedemption {
  return { redemption: { id: r.id, code: r.code, discount: r.discount, created_at: r.created_at } };
}

/** COUPON_INVALID: 404 when the code does not exist, 422 when inactive, expired or used up. */
function usableCoupon(state: SandboxState, clock: Clock, code: string): CouponRecord {
  const coupon = state.coupons.get(code.toUpperCase());
  if (!coupon) throw new SandboxError('COUPON_INVALID', 'The coupon does not exist (codes are matched without regard to case).', { status: 404 });
  const reason = !coupon.active ? 'is inactive'
    : coupon.expires_at !== null && Date.parse(coupon.expires_at) < clock.now() ? `expired at ${coupon.expires_at}`
    : coupon.max_redemptions !== null && coupon.redemptions >= coupon.max_redemptions ? 'has reached its redemption limit'
    : null;
  if (reason) throw new SandboxError('COUPON_INVALID', `The coupon ${reason}.`, { status: 422 });
  return coupon;
}

/** A percent coupon needs `order_total` to be worth anything; a fixed one never exceeds it. */
function discountOf(coupon: CouponRecord, orderTotal: number | undefined): number {
  if (coupon.type === 'percent') return orderTotal === undefined ? 0 : Math.round(orderTotal * coupon.value) / 100;
  return orderTotal === undefined ? coupon.value : Math.min(coupon.value, orderTotal);
}

function readBody(body: unknown, redeeming: boolean) {
  if (!isRecord(body)) throw validationError([{ path: '', message: `the body must be a JSON object, got ${typeOf(body)}` }]);
  const check = new Checker();
  const code = check.string(body.code, 'code', { required: true, max: 100 });
  const ref = readCustomerRef(body, check, !redeeming);
  const store_id = check.string(body.store_id, 'store_id', { required: redeeming });
  const idempotency_key = check.string(body.idempotency_key, 'idempotency_key', { required: redeeming, max: 255 });
  const order_total = check.number(body.order_total, 'order_total', { min: 0 });
  check.string(body.order_id, 'order_id');
  if (!check.ok || code === undefined) throw validationError(check.issues);
  return { code, ref, store_id, idempotency_key, order_total };
}
