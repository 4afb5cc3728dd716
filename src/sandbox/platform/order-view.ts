import type { Order } from '../../schemas/order.ts';
import type { OrderRecord } from '../state.ts';

/**
 * An order as the wire shows it (spec 2.7 plus `updated_at`, a wire assumption), as `GET /orders`
 * answers it and the webhooks carry it: a copy, so that no caller changes the stored order.
 */
export function orderView(record: OrderRecord): Order {
  return { ...structuredClone(record.order), updated_at: record.updated_at };
}
