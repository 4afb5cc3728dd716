import type { Scope } from '../schemas/health.ts';
import type { LoyaltyProgram } from '../schemas/loyalty.ts';
import type { SandboxKeySpec, SandboxMerchant, SandboxMerchantKey, SandboxMerchantSpec } from './merchants.ts';
import type { Order, OrderStatus } from '../schemas/order.ts';
import type { SandboxClock } from './clock.ts';
import type { FaultOptions } from './faults.ts';
import type { SandboxLogEntry } from './log.ts';
import type { CreateOrderInput } from './platform/orders.ts';
import type { RandomSource } from './random.ts';
import type { RateOptions } from './rate-limit.ts';
import type { COUPON_CODES } from './seed.ts';
import type { StoreStock } from './state.ts';
import type { DeliveryView } from './webhooks/delivery-engine.ts';
import type { HostResolver } from './webhooks/ssrf.ts';

/** Options of `createSandbox(options)`. */
export interface SandboxOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. @default 0 */
  port?: number;
  /**
   * Multiplies the webhook retry schedule (60 s … 43200 s) and the 10 s answer limit: 0.001 turns
   * the 14 h retry window into 53 s. The answer limit does not go below 1 s unless
   * `deliveryTimeoutMs` says so. @default 1
   */
  timeScale?: number;
  /**
   * Accept `http://` and private-address receivers (local tests). `false` applies the anti-SSRF
   * check of spec 6.3 exactly as production does. @default true
   */
  allowInsecureReceivers?: boolean;
  /**
   * More merchants beside the seeded one, each with its own stores and keys (a vendor serving many
   * merchants): `sandbox.merchants` lists them. Each key sees only its merchant's stores, orders and
   * webhook endpoints (5 per key), and `GET /health` answers its merchant.
   * @example
   * const sandbox = await createSandbox({ merchants: [{ stores: 2 }, { keys: [{ scopes: ['orders:read'] }] }] });
   * const key = sandbox.merchants[0].keys[0].apiKey;
   */
  merchants?: SandboxMerchantSpec[];
  /** Token buckets per key and per IP; `false` turns rate limiting off. @default 120 + 2/s per key, 300 + 5/s per IP */
  rate?: RateOptions;
  /** A seeded share of requests fails (see `FaultOptions`). @default none */
  faults?: FaultOptions | null;
  /** Time source for buckets, retries, answer limits and timestamps. @default the system clock */
  clock?: SandboxClock;
  /** Random source for faults without their own seed. @default Math.random */
  random?: RandomSource;
  /** Hostname resolution of the anti-SSRF check. @default node:dns lookup */
  resolveHost?: HostResolver;
  /** Answer limit of a delivery attempt in ms, overriding the scaled 10 s. */
  deliveryTimeoutMs?: number;
  /**
   * Told about every request answered (method, route template, status, ms) and every delivery
   * attempt that finished (event, endpoint, status, attempt n of 6, outcome). Entries never hold
   * an id from a path, a query value, a key, a secret or a payload. `integration-sdk sandbox`
   * prints them as its log.
   * @example
   * const sandbox = await createSandbox({ log: (entry) => entry.type === 'delivery' && console.log(entry.event, entry.status, entry.outcome) });
   */
  log?: (entry: SandboxLogEntry) => void;
}

/** The keys of every sandbox (`service_<key_id>_<secret>`). */
export interface SandboxKeys {
  /** Every scope, every store. Same as `apiKey`. */
  full: string;
  /** Every scope, only `storeIds[0]`. */
  oneStore: string;
  /** `orders:read` and `loyalty:read` only, every store. */
  readOnly: string;
}

/** One seeded key: the complete key, its id, scopes and stores. */
export interface SandboxKeyInfo {
  apiKey: string;
  keyId: string;
  scopes: Scope[];
  /** Empty means every store. */
  storeIds: string[];
}

/** What the sandbox starts with, for tests and demos to read. */
export interface SandboxSeed {
  /** The seeded merchant. */
  merchantId: string;
  stores: Array<{ id: string; name: string }>;
  keys: Record<keyof SandboxKeys, SandboxKeyInfo>;
  program: LoyaltyProgram;
  customers: Array<{ id: string; name: string; phone: string; external_id: string; points: number }>;
  coupons: typeof COUPON_CODES;
  /** external_ids already in the catalog, with stock in `storeIds[0]`. */
  products: string[];
}

/** A catalog product as stored (the API has no product read; this is for tests). */
export interface ProductSnapshot {
  external_id: string;
  name: string;
  price: number;
  gtin: string | null;
  category: string | null;
  stores: Record<string, StoreStock>;
}

/** A running sandbox, as `createSandbox()` resolves it: its `url` and keys for the client, the platform's side (`createOrder`, `setOrderStatus`), `handle` for msw, and `close`. */
export interface Sandbox {
  /** Base URL for the client, e.g. `http://127.0.0.1:53211` (the client appends `/integration/v1`). */
  url: string;
  /** The TCP port on 127.0.0.1. */
  port: number;
  /** The full-scope key. */
  apiKey: string;
  /** Seeded keys with different scopes and stores: `full` (= `apiKey`), `oneStore`, `readOnly`. */
  keys: SandboxKeys;
  /** The merchant's stores; `oneStore` is limited to the first. */
  storeIds: string[];
  /** The seeded merchant. */
  merchantId: string;
  /** Everything seeded: stores, keys, loyalty program, customers, coupons, products. */
  seed: SandboxSeed;
  /**
   * Plays the platform: creates an order (spec 2.7, defaults for everything left out) and emits
   * `order.created` to every subscribed endpoint whose key sees the store.
   * @example
   * const order = sandbox.createOrder({ source_channel: 'marketplace', items: [{ external_id: 'SKU-1001', quantity: 3 }] });
   */
  createOrder(input?: CreateOrderInput): Order;
  /**
   * Changes an order's status and emits `order.status_changed`; setting the current status again
   * changes nothing and emits nothing.
   * @example
   * sandbox.setOrderStatus(order.order_id, 'cancelled');
   */
  setOrderStatus(orderId: string, status: OrderStatus): Order;
  /**
   * Answers a Fetch `Request` with the same emulator, without a socket (for msw). A dropped-
   * connection fault rejects with a `TypeError`, as fetch does.
   * @example
   * setupServer(http.all(`${sandbox.url}/*`, ({ request }) => sandbox.handle(request)));
   */
  handle(request: Request): Promise<Response>;
  /** Resolves when every delivery is `delivered` or `dead` (none in flight, none waiting to retry). */
  idle(): Promise<void>;
  /**
   * Resolves with a delivery once `until` holds; by default once it is `delivered` or `dead`.
   * @example
   * await sandbox.waitForDelivery(id, (d) => d.attempt_count === 2 && d.status === 'retrying');
   */
  waitForDelivery(deliveryId: string, until?: (delivery: DeliveryView) => boolean): Promise<DeliveryView>;
  /** The delivery log of every endpoint (or one), newest first, never the payload. */
  deliveries(filter?: { webhookId?: string; event?: string }): DeliveryView[];
  /** The server-side feature flag: off, every route (health too) answers 503 FEATURE_DISABLED. */
  setFeatureEnabled(enabled: boolean): void;
  /** Replaces the fault injection; null turns it off. */
  setFaults(faults: FaultOptions | null): void;
  /** Revokes a key (its complete value or its key id): its next request answers 401 INVALID_API_KEY (no credential cache). */
  revokeKey(apiKey: string): void;
  /** The merchants added with the `merchants` option or `addMerchant`, oldest first (not the seeded one). */
  readonly merchants: SandboxMerchant[];
  /**
   * Adds a merchant with fresh stores and keys (also `POST /_sandbox/merchants`).
   * @example
   * const { merchantId, keys, storeIds } = sandbox.addMerchant({ stores: 2, keys: 1 });
   */
  addMerchant(spec?: SandboxMerchantSpec): SandboxMerchant;
  /**
   * Adds a key to a merchant (the merchant rotating its key; also `POST /_sandbox/merchants/:id/keys`).
   * @example
   * const next = sandbox.addKey(merchant.merchantId);
   * sandbox.revokeKey(merchant.keys[0].apiKey);
   */
  addKey(merchantId: string, spec?: SandboxKeySpec): SandboxMerchantKey;
  /** Off, loyalty program/balance/statement/points answer 404 NO_PROGRAM. */
  setLoyaltyProgramActive(active: boolean): void;
  /** While on, writes to this store fail per item with STORE_WRITE_FAILED. */
  setStoreWriteFailure(storeId: string, failing: boolean): void;
  /** A catalog product as stored, or `undefined` (the API has no product read). */
  getProduct(externalId: string): ProductSnapshot | undefined;
  /** Stops the server and every pending delivery timer and attempt. */
  close(): Promise<void>;
}

export type { CreateOrderInput, CreateOrderItem } from './platform/orders.ts';
export type { SandboxKeySpec, SandboxMerchant, SandboxMerchantKey, SandboxMerchantSpec } from './merchants.ts';
export type { DeliveryView } from './webhooks/delivery-engine.ts';
export type { SandboxClock } from './clock.ts';
export type { RandomSource } from './random.ts';
export type { FaultKind, FaultOptions } from './faults.ts';
export type { BucketConfig, RateOptions } from './rate-limit.ts';
export type { HostResolver } from './webhooks/ssrf.ts';
export type { SandboxDeliveryLog, SandboxLogEntry, SandboxRequestLog } from './log.ts';
