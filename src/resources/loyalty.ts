import { traceCall } from '../diagnostics.ts';
import type * as z from 'zod/mini';
import { IntegrationError } from '../errors/index.ts';
import {
  CouponRedemptionSchema,
  CouponValidationSchema,
  LoyaltyBalanceSchema,
  LoyaltyProgramSchema,
  LoyaltyStatementSchema,
  PointsResultSchema,
  type CouponRedemption,
  type CouponValidation,
  type CustomerRef,
  type LoyaltyBalance,
  type LoyaltyProgram,
  type LoyaltyStatement,
  type PointsInput,
  type PointsResult,
  type RedeemCouponInput,
  type ValidateCouponInput,
} from '../schemas/index.ts';
import { InputChecks } from '../transport/input-checks.ts';
import type { CallOptions, Requester } from '../transport/types.ts';

/** `loyalty.statement(customer, options)`: the call options plus how many entries to read. */
export interface StatementOptions extends CallOptions {
  /**
   * 1–100, newest first.
   *
   * @default 50 (the service's)
   * @example
   * ```ts
   * await client.loyalty.statement({ phone }, { limit: 10 });
   * ```
   */
  limit?: number;
}

/** A loyalty write's answer, with the `idempotency_key` it was sent with (yours or the one made for you). */
export type WithIdempotencyKey<T> = T & { idempotency_key: string };

/**
 * Loyalty (spec 4.6, scopes `loyalty:read` and `loyalty:write`). A customer is named by exactly one
 * of `phone` or `external_id`; loyalty never creates one. A write without `idempotency_key` gets
 * one (UUID v4), reused on every retry and returned, so that the call can be repeated safely.
 */
export class LoyaltyResource {
  readonly #requester: Requester;
  readonly #randomUUID: () => string;

  constructor(requester: Requester, randomUUID: () => string = () => globalThis.crypto.randomUUID()) {
    this.#requester = requester;
    this.#randomUUID = randomUUID;
  }

  /**
   * GET /loyalty/program. `NoProgramError` when the merchant has no active program.
   *
   * @example
   * ```ts
   * const program = await client.loyalty.program();
   * console.log(program.points_per_currency);
   * ```
   */
  program(options?: CallOptions): Promise<LoyaltyProgram> {
    return traceCall('loyalty.program', () => this.#requester.send({ method: 'GET', path: '/loyalty/program', schema: LoyaltyProgramSchema, retry: 'safe', options }));
  }

  /**
   * GET /loyalty/balance. The phone may have or lack the ninth digit, `+55`, spaces and dashes.
   *
   * @example
   * ```ts
   * const { points } = await client.loyalty.balance({ phone: '+55 11 91234-5678' });
   * ```
   */
  balance(customer: CustomerRef, options?: CallOptions): Promise<LoyaltyBalance> {
    return traceCall('loyalty.balance', async () => {
      checkCustomer(new InputChecks(), customer, true).throwIfAny();
      return this.#requester.send({ method: 'GET', path: '/loyalty/balance', query: customerQuery(customer), schema: LoyaltyBalanceSchema, retry: 'safe', options });
    });
  }

  /**
   * GET /loyalty/statement: balance and entries, newest first.
   *
   * @example
   * ```ts
   * const statement = await client.loyalty.statement({ external_id: 'CUST-1' }, { limit: 10 });
   * for (const entry of statement.entries) console.log(entry.type, entry.points);
   * ```
   */
  statement(customer: CustomerRef, options: StatementOptions = {}): Promise<LoyaltyStatement> {
    return traceCall('loyalty.statement', async () => {
      const { limit, ...callOptions } = options;
      checkCustomer(new InputChecks(), customer, true).optionalInteger('limit', limit, 1, 100).throwIfAny();
      return this.#requester.send({
        method: 'GET',
        path: '/loyalty/statement',
        query: { ...customerQuery(customer), limit },
        schema: LoyaltyStatementSchema,
        retry: 'safe',
        options: callOptions,
      });
    });
  }

  /**
   * POST /loyalty/points: credits whole points. Repeating the call with the same
   * `idempotency_key` never credits twice.
   *
   * @example
   * ```ts
   * const { entry, balance, idempotency_key } = await client.loyalty.credit({ phone, points: 50, order_id });
   * ```
   */
  credit(input: PointsInput, options?: CallOptions): Promise<WithIdempotencyKey<PointsResult>> {
    return traceCall('loyalty.credit', () => this.#points('/loyalty/points', input, options));
  }

  /**
   * POST /loyalty/points/debit: debits whole points; `InsufficientBalanceError` beyond the balance.
   *
   * @example
   * ```ts
   * await client.loyalty.debit({ external_id: 'CUST-1', points: 20, idempotency_key: `refund-${orderId}` });
   * ```
   */
  debit(input: PointsInput, options?: CallOptions): Promise<WithIdempotencyKey<PointsResult>> {
    return traceCall('loyalty.debit', () => this.#points('/loyalty/points/debit', input, options));
  }

  /**
   * POST /loyalty/coupons/validate: checks a coupon before redemption, writing nothing.
   * `CouponInvalidError` for an unknown (404), inactive, expired or exhausted (422) coupon.
   *
   * @example
   * ```ts
   * const { discount } = await client.loyalty.validateCoupon({ code: 'WELCOME10', phone, order_total: 120 });
   * ```
   */
  validateCoupon(input: ValidateCouponInput, options?: CallOptions): Promise<CouponValidation> {
    return traceCall('loyalty.validateCoupon', async () => {
      input = snapshot(input);
      const checks = checkCustomer(new InputChecks().text('code', input?.code), input, false);
      if (input?.order_total !== undefined && !(typeof input.order_total === 'number' && Number.isFinite(input.order_total) && input.order_total >= 0)) {
        checks.add('order_total', 'must be a number ≥ 0');
      }
      checks.throwIfAny();
      // A read in POST form: repeating it cannot act twice.
      return this.#requester.send({ method: 'POST', path: '/loyalty/coupons/validate', body: input, schema: CouponValidationSchema, retry: 'safe', options });
    });
  }

  /**
   * POST /loyalty/coupons/redeem. `ForbiddenStoreError` for a store outside the key's scope.
   *
   * @example
   * ```ts
   * const { redemption, idempotency_key } = await client.loyalty.redeemCoupon({ code: 'WELCOME10', phone, store_id, order_id });
   * ```
   */
  redeemCoupon(input: RedeemCouponInput, options?: CallOptions): Promise<WithIdempotencyKey<CouponRedemption>> {
    return traceCall('loyalty.redeemCoupon', async () => {
      input = snapshot(input);
      const checks = checkCustomer(new InputChecks().text('code', input?.code).text('store_id', input?.store_id), input, true);
      checkIdempotencyKey(checks, input?.idempotency_key);
      checks.throwIfAny();
      return this.#idempotentWrite('/loyalty/coupons/redeem', input, CouponRedemptionSchema, options);
    });
  }

  async #points(path: string, input: PointsInput, options: CallOptions | undefined): Promise<WithIdempotencyKey<PointsResult>> {
    input = snapshot(input);
    const checks = checkCustomer(new InputChecks(), input, true);
    if (!(Number.isSafeInteger(input?.points) && input.points > 0)) checks.add('points', 'must be a whole number > 0');
    checkIdempotencyKey(checks, input?.idempotency_key);
    checks.throwIfAny();
    return this.#idempotentWrite(path, input, PointsResultSchema, options);
  }

  /** One key per call, made before the first attempt: every retry sends the same body. */
  async #idempotentWrite<T extends object>(
    path: string,
    input: { idempotency_key?: string },
    schema: z.ZodMiniType<T>,
    options: CallOptions | undefined,
  ): Promise<WithIdempotencyKey<T>> {
    const idempotencyKey = input.idempotency_key ?? this.#randomUUID();
    try {
      const result = await this.#requester.send({
        method: 'POST',
        path,
        route: path,
        body: { ...input, idempotency_key: idempotencyKey },
        schema,
        retry: 'idempotency-key',
        options,
      });
      return { ...result, idempotency_key: idempotencyKey };
    } catch (error) {
      // The write may have been processed: the caller repeats it safely only with the same key.
      if (error instanceof IntegrationError) Object.defineProperty(error, 'idempotency_key', { value: idempotencyKey, enumerable: true });
      else if (options?.signal?.aborted) throw abortedWrite(path, idempotencyKey, options.signal.reason);
      throw error;
    }
  }
}

/**
 * What an aborted write rejects with: an abort like the one the caller asked for (same name, the
 * caller's reason as `cause`), carrying the key it was sent with. A new one per call, not the
 * reason itself: one signal may abort several writes, each with its own key, and a reason may not
 * take a property at all (a string).
 */
function abortedWrite(path: string, idempotencyKey: string, reason: unknown): DOMException {
  const name = reason instanceof DOMException && reason.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError';
  const error = new DOMException(`POST ${path} was aborted; it may have been applied if its request had left: repeat it with this idempotency_key, never a new one`, name);
  Object.defineProperty(error, 'cause', { value: reason, configurable: true, writable: true });
  Object.defineProperty(error, 'idempotency_key', { value: idempotencyKey, enumerable: true });
  return error;
}

/**
 * The input's own fields, each read once: what is checked is what is sent (a getter or a Proxy
 * cannot answer the check one value and the request another). Not an object: left for the checks.
 */
function snapshot<T>(input: T): T {
  return typeof input === 'object' && input !== null ? ({ ...input } as T) : input;
}

/** Exactly one of `phone` / `external_id` (at most one when not `required`). */
function checkCustomer(checks: InputChecks, customer: Partial<Record<'phone' | 'external_id', unknown>> | undefined, required: boolean): InputChecks {
  const named = (['phone', 'external_id'] as const).filter((field) => customer?.[field] !== undefined);
  if (named.length === 2) checks.add('customer', 'name the customer by phone or by external_id, not both');
  else if (named.length === 0 && required) checks.add('customer', 'name the customer by phone or by external_id');
  for (const field of named) checks.text(field, customer?.[field]);
  return checks;
}

function checkIdempotencyKey(checks: InputChecks, key: unknown): void {
  if (key !== undefined && !(typeof key === 'string' && key.length >= 1 && key.length <= 255)) {
    checks.add('idempotency_key', 'must be a string of 1 to 255 characters');
  }
}

function customerQuery(customer: CustomerRef): { phone?: string; external_id?: string } {
  return customer.phone !== undefined ? { phone: customer.phone } : { external_id: customer.external_id };
}
