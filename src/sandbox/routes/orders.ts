import type { Route, RouteContext } from '../http/route.ts';
import { SandboxError, validationError } from '../http/sandbox-error.ts';
import { orderView } from '../platform/order-view.ts';
import { keyCoversStore } from '../state.ts';

/**
 * Spec 4.4, read only. An order outside the key's stores answers exactly like a missing one, so
 * existence is never confirmed.
 */
export const orderRoutes: Route[] = [
  { method: 'GET', path: '/orders/:id', scope: 'orders:read', handler: getOrder },
  { method: 'GET', path: '/orders', scope: 'orders:read', handler: findByExternalId },
];

function getOrder({ state, key, params }: RouteContext) {
  const record = state.orders.get(params.id ?? '');
  if (!record || !keyCoversStore(state, key, record.order.store_id)) throw notFound();
  return { status: 200, body: orderView(record) };
}

function findByExternalId({ state, key, query }: RouteContext) {
  const externalOrderId = query.get('external_order_id');
  if (externalOrderId === null || externalOrderId === '') {
    throw validationError([{ path: 'external_order_id', message: 'is required: GET /orders only finds an order by its external_order_id' }]);
  }
  for (const record of state.orders.values()) {
    if (record.order.external_order_id === externalOrderId && keyCoversStore(state, key, record.order.store_id)) {
      return { status: 200, body: orderView(record) };
    }
  }
  throw notFound();
}

function notFound(): SandboxError {
  return new SandboxError('NOT_FOUND', 'Order not found, or outside the stores of this key.');
}
