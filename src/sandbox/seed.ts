import type { Scope } from '../schemas/health.ts';
import type { Clock } from '../clock.ts';
import type { CouponRecord, CustomerRecord, ProductRecord, SandboxState } from './state.ts';

/**
 * Fixed identifiers, so a `.env` written against one sandbox run keeps working on the next and the
 * docs can quote them. Every sandbox still gets its own fresh state.
 */
export const MERCHANT_ID = '3f6c1e2a-8d4b-4c7e-9a10-5b2f7d9e4c01';

export const STORES = [
  { id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', name: 'Loja Centro' },
  { id: 'b3e1d2c4-5f60-4a7b-8c9d-0e1f2a3b4c5d', name: 'Loja Norte' },
  { id: 'e8f9a0b1-c2d3-4e5f-a6b7-c8d9e0f1a2b3', name: 'Loja Teste' },
] as const;

const ALL_SCOPES: Scope[] = ['catalog:write', 'stock:write', 'orders:read', 'webhooks:manage', 'loyalty:read', 'loyalty:write'];

/** The three keys of every sandbox, in the `service_<key_id>_<secret>` form of spec part 5. */
export const KEYS = {
  /** Every scope, every store (`store_ids: []`). */
  full: { keyId: 'sbxfull01', secret: '5f0c9a3e7b2d4c18a6e1f9b0d3c7a254', scopes: ALL_SCOPES, storeIds: [] as string[] },
  /** Every scope, limited to the first store ("a key restricted to a test store"). */
  oneStore: { keyId: 'sbxstore01', secret: '9d2e4f6a8b0c1d3e5f7a9b1c3d5e7f90', scopes: ALL_SCOPES, storeIds: [STORES[0].id] },
  /** Reads only: orders and loyalty. */
  readOnly: { keyId: 'sbxread01', secret: '1a3c5e7g9i2k4m6o8q0s2u4w6y8a0c2e', scopes: ['orders:read', 'loyalty:read'] as Scope[], storeIds: [] as string[] },
} as const;

export type KeyName = keyof typeof KEYS;

export const COUPON_CODES = {
  /** Fixed 10.00 off, no expiry, no limit. */
  valid: 'WELCOME10',
  /** 15 % off, valid until 2099. */
  percent: 'SAVE15',
  /** Expired in 2020: 422 COUPON_INVALID. */
  expired: 'SUMMER2020',
  /** Deactivated: 422 COUPON_INVALID. */
  inactive: 'PAUSED5',
  /** Its single redemption is used up: 422 COUPON_INVALID. */
  exhausted: 'ONCE50',
} as const;

/** The complete key of spec part 5, `service_<key_id>_<secret>`. */
export function apiKeyOf(name: KeyName): string {
  return `service_${KEYS[name].keyId}_${KEYS[name].secret}`;
}

function product(now: string, external_id: string, name: string, price: number, gtin: string | null, category: string, stock: number): ProductRecord {
  return {
    external_id, name, price, gtin, category, created_at: now, updated_at: now,
    stores: new Map([[STORES[0].id, { stock_quantity: stock, price_override: null, active: true }]]),
  };
}

function customer(now: string, id: string, name: string, phone: string, external_id: string, points: number): CustomerRecord {
  const entries = points > 0
    ? [{ id: `${id.slice(0, 24)}00000000e001`, type: 'credit', points, description: 'Sandbox opening balance', created_at: now, idempotency_key: null }]
    : [];
  return { id, name, phone, external_id, points, entries };
}

function coupon(code: string, type: 'percent' | 'fixed', value: number, extra: Partial<CouponRecord> = {}): [string, CouponRecord] {
  return [code, { code, type, value, expires_at: null, active: true, max_redemptions: null, redemptions: 0, ...extra }];
}

export function createSeededState(clock: Clock): SandboxState {
  const now = new Date(clock.now()).toISOString();
  const keys = (Object.keys(KEYS) as KeyName[]).map((name) => ({
    keyId: KEYS[name].keyId, merchantId: MERCHANT_ID, apiKey: apiKeyOf(name), scopes: [...KEYS[name].scopes], storeIds: [...KEYS[name].storeIds], revoked: false,
  }));
  return {
    merchantId: MERCHANT_ID,
    storeIds: STORES.map((s) => s.id),
    merchants: new Map([[MERCHANT_ID, { id: MERCHANT_ID, stores: STORES.map((s) => ({ ...s })) }]]),
    storeMerchants: new Map(STORES.map((s) => [s.id, MERCHANT_ID])),
    featureEnabled: true,
    keys: new Map(keys.map((k) => [k.keyId, k])),
    products: new Map([
      product(now, 'SKU-1001', 'Café torrado 500 g', 24.9, '7891234567895', 'Mercearia', 12),
      product(now, 'SKU-1002', 'Queijo minas frescal (kg)', 49.9, null, 'Frios', 3.25),
      product(now, 'SKU-1003', 'Pão de queijo', 2.5, null, 'Padaria', 40),
    ].map((p) => [p.external_id, p])),
    orders: new Map(),
    webhooks: new Map(),
    deliveries: new Map(),
    program: { id: '0b7d3c2a-6e4f-4a1b-9c8d-7e6f5a4b3c2d', name: 'Sandbox Rewards', active: true, points_per_currency: 1, currency_per_point: 0.05 },
    customers: [
      customer(now, '6f1e2d3c-4b5a-4697-8877-665544332211', 'Maria Silva', '+5511987654321', 'CUST-001', 500),
      customer(now, '1d2c3b4a-5e6f-4a7b-8c9d-aabbccddeeff', 'João Souza', '+5521998765432', 'CUST-002', 40),
      // Stored in the old 8-digit mobile form: found by `11 98123-4567` too (ninth-digit matching).
      customer(now, '9a8b7c6d-5e4f-4321-8fed-cba987654321', 'Ana Costa', '+551181234567', 'CUST-003', 0),
    ],
    coupons: new Map([
      coupon(COUPON_CODES.valid, 'fixed', 10),
      coupon(COUPON_CODES.percent, 'percent', 15, { expires_at: '2099-12-31T23:59:59.000Z' }),
      coupon(COUPON_CODES.expired, 'percent', 20, { expires_at: '2020-03-20T23:59:59.000Z' }),
      coupon(COUPON_CODES.inactive, 'fixed', 5, { active: false }),
      coupon(COUPON_CODES.exhausted, 'fixed', 50, { max_redemptions: 1, redemptions: 1 }),
    ]),
    loyaltyWrites: new Map(),
    redemptions: new Map(),
    failingStores: new Set(),
    nextDisplayNumber: 1001,
  };
}
