import { traceCall } from '../diagnostics.ts';
import { ApiError } from '../errors/index.ts';
import { OrderSchema, type Order } from '../schemas/index.ts';
import { InputChecks, segment } from '../transport/input-checks.ts';
import type { CallOptions, Requester } from '../transport/types.ts';

/**
 * Orders, read only (spec 4.4, scope `orders:read`). Orders are created in the platform and pushed
 * by the `order.created` webhook; these reads are for reconciliation.
 */
export class OrdersResource {
  readonly #requester: Requester;

  constructor(requester: Requester) {
    this.#requester = requester;
  }

  /**
   * GET /orders/{id}. An order that does not exist or is outside the key's stores throws
   * `NotFoundError` (the service does not confirm existence).
   *
   * @example
   * ```ts
   * const order = await client.orders.get('5b0c7c1e-8d1a-4f7e-9a51-0f6f3f1f2c3d');
   * console.log(order.display_number, order.status, order.totals.total);
   * ```
   */
  get(orderId: string, options?: CallOptions): Promise<Order> {
    return traceCall('orders.get', async () => {
      new InputChecks().text('orderId', orderId).throwIfAny();
      return this.#requester.send({ method: 'GET', path: `/orders/${segment(orderId, 'orderId')}`, route: '/orders/{id}', schema: OrderSchema, retry: 'safe', options });
    });
  }

  /**
   * GET /orders?external_order_id=…: the order born in an external channel (a marketplace) with
   * that id, or `null` when none is visible to the key.
   *
   * @example
   * ```ts
   * const order = await client.orders.findByExternalId('MKT-778812');
   * if (order === null) console.log('not received yet');
   * ```
   */
  findByExternalId(externalOrderId: string, options?: CallOptions): Promise<Order | null> {
    return traceCall('orders.findByExternalId', async () => {
      new InputChecks().text('externalOrderId', externalOrderId).throwIfAny();
      try {
        return await this.#requester.send({ method: 'GET', path: '/orders', query: { external_order_id: externalOrderId }, schema: OrderSchema, retry: 'safe', options });
      } catch (error) {
        // Only the service's own NOT_FOUND: a proxy's 404 page (a wrong baseUrl) must not read as "no order".
        if (error instanceof ApiError && error.status === 404 && error.code === 'NOT_FOUND') return null;
        throw error;
      }
    });
  }
}
