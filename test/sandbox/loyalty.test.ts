import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { CouponValidationSchema, LoyaltyBalanceSchema, LoyaltyProgramSchema, LoyaltyStatementSchema, PointsResultSchema } from '../../src/schemas/loyalty.ts';
import { phoneKey } from '../../src/sandbox/loyalty/phone.ts';
import { api } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox({ rate: false });
});
afterEach(() => sandbox.close());

const get = (path: string, key?: string) => api(sandbox, key)('GET', path);
const post = (path: string, body: unknown, key?: string) => api(sandbox, key)('POST', path, body);

describe('program, balance and statement', () => {
  test('the program, and 404 NO_PROGRAM when it is off', async () => {
    const program = await get('/loyalty/program', sandbox.keys.readOnly);
    expect(program.status).toBe(200);
    expect(LoyaltyProgramSchema.safeParse(program.body).success).toBe(true);
    sandbox.setLoyaltyProgramActive(false);
    expect((await get('/loyalty/program')).body.error.code).toBe('NO_PROGRAM');
    expect((await get('/loyalty/balance?external_id=CUST-001')).body.error.code).toBe('NO_PROGRAM');
  });

  test.each([
    '+5511987654321', '11987654321', '1187654321', '(11) 98765-4321', '+55 11 8765-4321', '011 98765 4321',
  ])('phone %s finds Maria (ninth digit, +55 and punctuation ignored)', async (phone) => {
    const answer = await get(`/loyalty/balance?phone=${encodeURIComponent(phone)}`);
    expect(answer.status).toBe(200);
    expect(LoyaltyBalanceSchema.safeParse(answer.body).success).toBe(true);
    expect(answer.body).toMatchObject({ customer: { name: 'Maria Silva', external_id: 'CUST-001' }, points: 500, program_id: sandbox.seed.program.id });
  });

  test('a customer stored without the ninth digit is found with it', async () => {
    expect((await get('/loyalty/balance?phone=11981234567')).body.customer.name).toBe('Ana Costa');
    expect((await get('/loyalty/balance?external_id=CUST-003')).body.points).toBe(0);
  });

  test('another number, or another area code, is not the same customer', async () => {
    expect((await get('/loyalty/balance?phone=11987654322')).body.error.code).toBe('CUSTOMER_NOT_FOUND');
    expect((await get('/loyalty/balance?phone=21987654321')).status).toBe(404);
    expect(phoneKey('12345')).toBeNull();
  });

  test('exactly one of phone or external_id: both, neither or a non-phone is 400', async () => {
    for (const query of ['?phone=11987654321&external_id=CUST-001', '', '?phone=abc']) {
      const answer = await get(`/loyalty/balance${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body.error.details).toEqual([{ path: expect.any(String), message: expect.any(String) }]);
    }
  });

  test('the statement lists entries newest first, honouring limit', async () => {
    await post('/loyalty/points', { external_id: 'CUST-001', points: 10, idempotency_key: 'a' });
    await post('/loyalty/points/debit', { external_id: 'CUST-001', points: 3, idempotency_key: 'b' });
    const statement = await get('/loyalty/statement?external_id=CUST-001');
    expect(LoyaltyStatementSchema.safeParse(statement.body).success).toBe(true);
    expect(statement.body.points).toBe(507);
    expect(statement.body.entries.map((e: { type: string; points: number }) => [e.type, e.points])).toEqual([['debit', 3], ['credit', 10], ['credit', 500]]);
    expect((await get('/loyalty/statement?external_id=CUST-001&limit=1')).body.entries).toHaveLength(1);
    expect((await get('/loyalty/statement?external_id=CUST-001&limit=101')).status).toBe(400);
  });
});

describe('points', () => {
  test('a credit is idempotent: the same key again is 200 with the same entry and no second credit', async () => {
    const body = { phone: '11 98765-4321', points: 25, idempotency_key: 'order-1001-points', description: 'Order 1001' };
    const first = await post('/loyalty/points', body);
    expect(first.status).toBe(201);
    expect(PointsResultSchema.safeParse(first.body).success).toBe(true);
    expect(first.body).toMatchObject({ balance: 525, entry: { type: 'credit', points: 25, idempotency_key: 'order-1001-points', description: 'Order 1001' } });
    const again = await post('/loyalty/points', body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await get('/loyalty/balance?external_id=CUST-001')).body.points).toBe(525);
  });

  test('a debit larger than the balance is 422 INSUFFICIENT_BALANCE and changes nothing', async () => {
    const answer = await post('/loyalty/points/debit', { external_id: 'CUST-002', points: 41, idempotency_key: 'd1' });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('INSUFFICIENT_BALANCE');
    const ok = await post('/loyalty/points/debit', { external_id: 'CUST-002', points: 40, idempotency_key: 'd1' });
    expect(ok.status).toBe(201);
    expect(ok.body.balance).toBe(0);
    expect((await post('/loyalty/points/debit', { external_id: 'CUST-002', points: 40, idempotency_key: 'd1' })).status).toBe(200);
  });

  test('find-only: an unknown customer is 404 CUSTOMER_NOT_FOUND and is not created', async () => {
    const answer = await post('/loyalty/points', { phone: '31999990000', points: 5, idempotency_key: 'x' });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('CUSTOMER_NOT_FOUND');
    expect((await get('/loyalty/balance?phone=31999990000')).status).toBe(404);
  });

  test('points must be a whole number above 0 and idempotency_key 1–255 characters', async () => {
    for (const body of [
      { external_id: 'CUST-001', points: 0, idempotency_key: 'k' },
      { external_id: 'CUST-001', points: 1.5, idempotency_key: 'k' },
      { external_id: 'CUST-001', points: 1 },
      { external_id: 'CUST-001', points: 1, idempotency_key: 'k'.repeat(256) },
    ]) {
      const answer = await post('/loyalty/points', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('coupons', () => {
  test('validate a fixed and a percent coupon', async () => {
    const fixed = await post('/loyalty/coupons/validate', { code: 'WELCOME10', order_total: 8 });
    expect(fixed.status).toBe(200);
    expect(CouponValidationSchema.safeParse(fixed.body).success).toBe(true);
    expect(fixed.body).toEqual({ valid: true, coupon: { code: 'WELCOME10', type: 'fixed', value: 10, expires_at: null }, discount: 8 });
    const percent = await post('/loyalty/coupons/validate', { code: 'save15', order_total: 80, phone: '11987654321' });
    expect(percent.body.discount).toBe(12);
  });

  test('unknown is 404 COUPON_INVALID; expired, inactive or used up is 422 COUPON_INVALID', async () => {
    const unknown = await post('/loyalty/coupons/validate', { code: 'NOPE' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'COUPON_INVALID']);
    for (const code of [sandbox.seed.coupons.expired, sandbox.seed.coupons.inactive, sandbox.seed.coupons.exhausted]) {
      const answer = await post('/loyalty/coupons/validate', { code });
      expect([answer.status, answer.body.error.code]).toEqual([422, 'COUPON_INVALID']);
    }
    expect((await post('/loyalty/coupons/validate', { code: 'WELCOME10', phone: '31999990000' })).body.error.code).toBe('CUSTOMER_NOT_FOUND');
  });

  test('redeem is idempotent and refuses a store outside the key with 403 FORBIDDEN_STORE', async () => {
    const [mine, other] = sandbox.storeIds;
    const body = { code: 'WELCOME10', external_id: 'CUST-001', store_id: mine, idempotency_key: 'r1', order_total: 50 };
    const first = await post('/loyalty/coupons/redeem', body, sandbox.keys.oneStore);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ redemption: { id: expect.any(String), code: 'WELCOME10', discount: 10, created_at: expect.any(String) } });
    expect((await post('/loyalty/coupons/redeem', body, sandbox.keys.oneStore)).body).toEqual(first.body);
    const forbidden = await post('/loyalty/coupons/redeem', { ...body, store_id: other, idempotency_key: 'r2' }, sandbox.keys.oneStore);
    expect([forbidden.status, forbidden.body.error.code]).toEqual([403, 'FORBIDDEN_STORE']);
    const missingStore = await post('/loyalty/coupons/redeem', { ...body, store_id: undefined, idempotency_key: 'r3' });
    expect(missingStore.body.error.details).toEqual([{ path: 'store_id', message: expect.any(String) }]);
  });

  test('redeeming an exhausted coupon is 422; the validate scope is loyalty:write', async () => {
    const answer = await post('/loyalty/coupons/redeem', { code: 'ONCE50', external_id: 'CUST-001', store_id: sandbox.storeIds[0], idempotency_key: 'r9' });
    expect([answer.status, answer.body.error.code]).toEqual([422, 'COUPON_INVALID']);
    const readOnly = await post('/loyalty/coupons/validate', { code: 'WELCOME10' }, sandbox.keys.readOnly);
    expect(readOnly.body.error.details.required_scope).toBe('loyalty:write');
  });
});
