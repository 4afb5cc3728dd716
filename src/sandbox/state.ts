import type { Scope } from '../schemas/health.ts';
import type { Order } from '../schemas/order.ts';
import type { DeliveryStatus } from '../schemas/webhooks.ts';
import type { LoyaltyEntry, LoyaltyProgram } from '../schemas/loyalty.ts';

/**
 * The in-memory service: merchants (the seeded one first), their stores and keys, and the catalog,
 * orders, webhooks and loyalty. Orders, webhooks and reads are kept apart per merchant through the
 * stores a key covers; the catalog and loyalty data are one shared set (see docs/sandbox.md).
 */
export interface SandboxState {
  /** The seeded merchant. */
  merchantId: string;
  /** Every store of every merchant (a store belongs to one merchant: `merchants`). */
  storeIds: string[];
  /** Every merchant, by id, with its stores. */
  merchants: Map<string, MerchantRecord>;
  /** The merchant of each store, by store id. */
  storeMerchants: Map<string, string>;
  /** The server-side feature flag of spec part 1: off, every route answers 503. */
  featureEnabled: boolean;
  keys: Map<string, ApiKeyRecord>;
  products: Map<string, ProductRecord>;
  orders: Map<string, OrderRecord>;
  webhooks: Map<string, WebhookEndpointRecord>;
  deliveries: Map<string, DeliveryRecord>;
  program: LoyaltyProgram;
  customers: CustomerRecord[];
  coupons: Map<string, CouponRecord>;
  /** Idempotent loyalty writes, by `<operation>:<idempotency_key>`. */
  loyaltyWrites: Map<string, { entry: LoyaltyEntry; customerId: string }>;
  redemptions: Map<string, RedemptionRecord>;
  /** Stores whose writes fail with STORE_WRITE_FAILED (a control, to exercise that item error). */
  failingStores: Set<string>;
  nextDisplayNumber: number;
}

export interface MerchantRecord {
  id: string;
  stores: Array<{ id: string; name: string }>;
}

export interface ApiKeyRecord {
  keyId: string;
  /** The merchant that created the key: `GET /health` answers it, and the key sees only its stores. */
  merchantId: string;
  /** The complete `service_<key_id>_<secret>`. */
  apiKey: string;
  scopes: Scope[];
  /** Empty means every store of the merchant. */
  storeIds: string[];
  revoked: boolean;
}

export interface StoreStock {
  stock_quantity: number | null;
  price_override: number | null;
  active: boolean;
}

export interface ProductRecord {
  external_id: string;
  name: string;
  price: number;
  gtin: string | null;
  category: string | null;
  stores: Map<string, StoreStock>;
  created_at: string;
  updated_at: string;
}

export interface OrderRecord {
  order: Order;
  updated_at: string;
}

export interface WebhookEndpointRecord {
  id: string;
  /** The key that registered it: endpoints are listed and limited per key (integration). */
  keyId: string;
  url: string;
  events: string[];
  secret: string;
  consecutive_failures: number;
  created_at: string;
}

export interface DeliveryRecord {
  id: string;
  webhook_id: string;
  event: string;
  status: DeliveryStatus;
  attempt_count: number;
  response_status: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  /** The event's `data`; kept for the next attempt, never shown in the log. */
  data: unknown;
}

export interface CustomerRecord {
  id: string;
  name: string;
  /** E.164, e.g. `+5511987654321`. */
  phone: string;
  external_id: string;
  points: number;
  /** Oldest first. */
  entries: LoyaltyEntry[];
}

export interface CouponRecord {
  code: string;
  type: 'percent' | 'fixed';
  value: number;
  expires_at: string | null;
  active: boolean;
  max_redemptions: number | null;
  redemptions: number;
}

export interface RedemptionRecord {
  id: string;
  code: string;
  discount: number;
  created_at: string;
  customerId: string;
  store_id: string;
}

/** Whether `storeId` is inside the key's store scope (an empty list means every store of the key's merchant). */
export function keyCoversStore(state: SandboxState, key: ApiKeyRecord, storeId: string): boolean {
  const id = canonicalStoreId(storeId);
  if (state.storeMerchants.get(id) !== key.merchantId) return false;
  return key.storeIds.length === 0 || key.storeIds.includes(id);
}

/** UUIDs compare without regard to letter case (RFC 9562); the sandbox keeps them lower case. */
export function canonicalStoreId(storeId: string): string {
  return storeId.toLowerCase();
}
