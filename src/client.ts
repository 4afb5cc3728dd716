import { traceCall } from './diagnostics.ts';
import * as z from 'zod/mini';
import { CatalogResource } from './resources/catalog.ts';
import { LoyaltyResource } from './resources/loyalty.ts';
import { OrdersResource } from './resources/orders.ts';
import { StockResource } from './resources/stock.ts';
import { WebhooksResource } from './resources/webhooks.ts';
import { HealthSchema, type Health } from './schemas/index.ts';
import { transportSettingsFrom, type IntegrationClientOptions } from './transport/client-options.ts';
import { HttpRequester, type TransportSettings } from './transport/http-requester.ts';
import { checkCallerPath, InputChecks } from './transport/input-checks.ts';
import type { CallOptions, HttpMethod, Requester, RetryMode } from './transport/types.ts';

/**
 * Internal: a function under this registered symbol in the options builds the client's transport
 * from its checked settings instead of `HttpRequester` (`integration-sdk/tenants` reads a tenant's
 * key from its store at each call and turns its 401 into `TenantKeyInvalidError`). Not a public option.
 */
export const TRANSPORT_FACTORY = Symbol.for('integration-sdk.transportFactory');

interface InternalClientOptions {
  [TRANSPORT_FACTORY]?: (settings: TransportSettings) => Requester;
}

/**
 * `client.request(input)`: a route this SDK does not wrap yet.
 *
 * @example
 * ```ts
 * await client.request({ method: 'GET', path: '/loyalty/statement', query: { phone, limit: 5 } });
 * await client.request({ method: 'POST', path: '/some/new/route', body: { x: 1 }, idempotent: true });
 * ```
 */
export interface RawRequest {
  /** `GET`, `POST`, `PUT`, `PATCH` or `DELETE` (any case). */
  method: HttpMethod;
  /** Relative to `/integration/v1` (`'/health'`); a path already starting with it is used as is. */
  path: string;
  /** Sent as the query string; `undefined` values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /**
   * Whether repeating the request cannot act twice. `true` retries it like a GET; `false` repeats
   * it only when the service certainly did not receive it (refused connection, 429, 503). A body
   * with an `idempotency_key` string is also repeated on 409 `CONFLICT`, unless this is `false`.
   *
   * @default true for GET, PUT, DELETE and a body with an `idempotency_key`; false for other POST and PATCH
   */
  idempotent?: boolean;
}

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const IDEMPOTENT_METHODS: readonly HttpMethod[] = ['GET', 'PUT', 'DELETE'];

/**
 * The Integration API v1 client. One instance per key: its calls share one rate-limit budget, and
 * a 429 met by any of them pauses all of them.
 *
 * @example
 * ```ts
 * import { IntegrationClient } from 'integration-sdk';
 *
 * const client = new IntegrationClient({
 *   apiKey: process.env.INTEGRATION_API_KEY!, // service_<key_id>_<secret>
 *   baseUrl: 'https://platform.example.com',
 * });
 * const { merchant_id, scopes } = await client.health();
 * ```
 */
export class IntegrationClient {
  /**
   * Products in bulk (POST /products/bulk), batched, with per-item results.
   *
   * @example
   * ```ts
   * const result = await client.catalog.upsertProducts(items, { onProgress: (p) => console.log(p.itemsDone) });
   * ```
   */
  readonly catalog: CatalogResource;
  /**
   * Absolute stock and price per store (PATCH /stock), batched.
   *
   * @example
   * ```ts
   * await client.stock.set([{ external_id: 'SKU-1', store_id, stock_quantity: 12.5 }]);
   * ```
   */
  readonly stock: StockResource;
  /**
   * Order reads for reconciliation.
   *
   * @example
   * ```ts
   * const order = await client.orders.get(orderId);
   * ```
   */
  readonly orders: OrdersResource;
  /**
   * Webhook endpoints and their delivery log.
   *
   * @example
   * ```ts
   * const endpoints = await client.webhooks.list();
   * ```
   */
  readonly webhooks: WebhooksResource;
  /**
   * Loyalty program, balances, points and coupons.
   *
   * @example
   * ```ts
   * const { points } = await client.loyalty.balance({ phone: '11912345678' });
   * ```
   */
  readonly loyalty: LoyaltyResource;
  // Holds the key; private so that JSON.stringify and util.inspect of the client cannot show it.
  readonly #requester: Requester;
  readonly #baseUrl: string;

  /**
   * Checks every option at once: a missing or malformed key, a missing or malformed `baseUrl`, an
   * `http://` URL for a host that is not loopback, and bad numbers throw `ConfigurationError`.
   *
   * @example
   * ```ts
   * const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY!, baseUrl: 'https://platform.example.com' });
   * ```
   */
  constructor(options: IntegrationClientOptions) {
    const settings = transportSettingsFrom(options);
    this.#baseUrl = settings.baseUrl;
    this.#requester = (options as InternalClientOptions)[TRANSPORT_FACTORY]?.(settings) ?? new HttpRequester(settings);
    this.catalog = new CatalogResource(this.#requester);
    this.stock = new StockResource(this.#requester);
    this.orders = new OrdersResource(this.#requester);
    this.webhooks = new WebhooksResource(this.#requester, settings.clock, () => settings);
    this.loyalty = new LoyaltyResource(this.#requester, options.randomUUID);
  }

  /**
   * The API's base URL as requests use it (`baseUrl` + `/integration/v1`). The delta sync scopes its
   * state by it.
   *
   * @example
   * ```ts
   * console.log(client.baseUrl); // https://platform.example.com/integration/v1
   * ```
   */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /**
   * GET /health: checks the key and the environment. No scope needed. `AuthenticationError` for a
   * bad key, `FeatureDisabledError` while the integration is not enabled.
   *
   * @example
   * ```ts
   * const health = await client.health();
   * console.log(health.status, health.scopes, health.store_ids.length === 0 ? 'all stores' : health.store_ids);
   * ```
   */
  health(options?: CallOptions): Promise<Health> {
    return traceCall('health', () => this.#requester.send({ method: 'GET', path: '/health', schema: HealthSchema, retry: 'safe', options }));
  }

  /**
   * The escape hatch for routes this SDK does not wrap yet: same auth, throttle, retries, deadlines
   * and error mapping. Returns the parsed JSON body, unchecked (`undefined` for an empty body).
   *
   * @example
   * ```ts
   * const body = await client.request({ method: 'GET', path: '/loyalty/program' });
   * ```
   */
  request(input: RawRequest, options?: CallOptions): Promise<unknown> {
    return traceCall('request', async () => {
      const method = typeof input?.method === 'string' ? (input.method.toUpperCase() as HttpMethod) : undefined;
      const checks = new InputChecks().text('path', input?.path);
      if (method === undefined || !METHODS.includes(method)) checks.add('method', `must be one of ${METHODS.join(', ')}`);
      if (typeof input?.path === 'string' && (/^[a-z][a-z\d+.-]*:/i.test(input.path) || input.path.startsWith('//'))) {
        checks.add('path', 'must be a path relative to /integration/v1, not a URL: the key is sent only to baseUrl');
      }
      checks.throwIfAny();
      checkCallerPath(input.path);
      return this.#requester.send({
        method: method!,
        path: input.path,
        // The caller's path may hold ids: diagnostics see only that it was one.
        route: '/{path}',
        query: input.query,
        body: input.body,
        schema: z.unknown(),
        retry: retryModeOf(input, method!),
        options,
      });
    });
  }
}

/**
 * A body carrying an `idempotency_key` makes a repeat safe, and a 409 `CONFLICT` worth repeating
 * with the same key (surface document, "Retries"), unless the caller said `idempotent: false`.
 */
function retryModeOf(input: RawRequest, method: HttpMethod): RetryMode {
  const body = input.body as { idempotency_key?: unknown } | null | undefined;
  const carriesKey = typeof body === 'object' && body !== null && typeof body.idempotency_key === 'string';
  if (carriesKey && input.idempotent !== false) return 'idempotency-key';
  return (input.idempotent ?? IDEMPOTENT_METHODS.includes(method)) ? 'safe' : 'unsafe';
}

export type { IntegrationClientOptions };
