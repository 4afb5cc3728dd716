import { randomUUID } from 'node:crypto';
import type { Address, Order, OrderItem, OrderStatus, OrderStatusChange, SourceChannel } from '../../schemas/order.ts';
import type { Clock } from '../../clock.ts';
import { isoAt } from '../clock.ts';
import { orderView } from './order-view.ts';
import { keyCoversStore, type SandboxState, type WebhookEndpointRecord } from '../state.ts';
import type { DeliveryEngine } from '../webhooks/delivery-engine.ts';

/** A line of `createOrder`: only `external_id` is needed; the rest comes from the catalog. */
export type CreateOrderItem = Partial<OrderItem> & { external_id: string };

/**
 * What `createOrder` may set; everything left out gets a sensible default (a delivered-by-courier
 * PIX order of the seeded customer Maria Silva, one coffee, in the first store).
 */
export interface CreateOrderInput {
  store_id?: string;
  /** Defaults to null, or to `MKT-<display_number>` for the `marketplace` channel. */
  external_order_id?: string | null;
  source_channel?: SourceChannel;
  status?: OrderStatus;
  customer?: Partial<Omit<Order['customer'], 'address'>> & { address?: Partial<Address> };
  items?: CreateOrderItem[];
  delivery?: Partial<Order['delivery']>;
  payment?: Partial<Order['payment']>;
  discount?: number;
  metadata?: Record<string, unknown>;
}

const DEFAULT_ADDRESS: Address = {
  cep: '01310-100', street: 'Avenida Paulista', number: '1000', complement: 'Apto 42', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP',
};

const round2 = (n: number) => Math.round(n * 100) / 100;

/** An order and the deliveries that announce it (one per endpoint told). */
export interface Announced {
  order: Order;
  deliveryIds: string[];
}

/** The platform side: orders are born here (never through the API) and announced by webhook. */
export class Platform {
  readonly #state: SandboxState;
  readonly #clock: Clock;
  readonly #deliveries: DeliveryEngine;

  constructor(state: SandboxState, clock: Clock, deliveries: DeliveryEngine) {
    this.#state = state;
    this.#clock = clock;
    this.#deliveries = deliveries;
  }

  createOrder(input: CreateOrderInput = {}): Order {
    return this.announceNewOrder(input).order;
  }

  /**
   * Creates an order and emits `order.created` to every subscribed endpoint that sees its store, or
   * only to `recipients` when given (the command line's `sandbox deliver --url`).
   */
  announceNewOrder(input: CreateOrderInput = {}, recipients?: readonly WebhookEndpointRecord[]): Announced {
    const state = this.#state;
    const store_id = input.store_id ?? state.storeIds[0] ?? '';
    if (!state.storeIds.includes(store_id)) throw new Error(`createOrder: unknown store_id ${store_id}; use one of sandbox.storeIds.`);
    const display_number = String(state.nextDisplayNumber++);
    const source_channel = input.source_channel ?? 'catalog';
    const address = { ...DEFAULT_ADDRESS, ...input.customer?.address };
    const items = (input.items ?? [{ external_id: 'SKU-1001', quantity: 2 }]).map((line) => this.#line(store_id, line));
    const deliveryType = input.delivery?.type ?? 'delivery';
    const freight = input.delivery?.freight_price ?? (deliveryType === 'pickup' ? 0 : 7.5);
    const subtotal = round2(items.reduce((sum, item) => sum + item.line_total, 0));
    const discount = input.discount ?? 0;
    const { complement: _complement, ...deliveryAddress } = address;
    const now = isoAt(this.#clock);
    const order: Order = {
      order_id: randomUUID(),
      display_number,
      external_order_id: input.external_order_id !== undefined ? input.external_order_id : source_channel === 'marketplace' ? `MKT-${display_number}` : null,
      source_channel,
      status: input.status ?? 'confirmed',
      store_id,
      created_at: now,
      customer: { name: 'Maria Silva', phone: '+5511987654321', email: 'maria.silva@example.com', ...input.customer, address },
      items,
      delivery: { type: deliveryType, freight_price: freight, address: deliveryType === 'pickup' ? null : deliveryAddress, ...input.delivery },
      payment: { method: 'pix', status: 'paid', change_for: null, ...input.payment },
      totals: { subtotal, freight, discount, total: round2(subtotal + freight - discount) },
      metadata: input.metadata ?? {},
    };
    const record = { order, updated_at: now };
    state.orders.set(order.order_id, record);
    // Spec 6: order.created once per order and endpoint: this is the only place that emits it.
    const deliveryIds = this.#deliveries.emit('order.created', orderView(record), recipients ?? this.#subscribers('order.created', store_id));
    return { order: orderView(record), deliveryIds };
  }

  setOrderStatus(orderId: string, status: OrderStatus): Order {
    return this.changeStatus(orderId, status).order;
  }

  /** `setOrderStatus`, with the ids of the `order.status_changed` deliveries (none when unchanged). */
  changeStatus(orderId: string, status: OrderStatus): Announced {
    const record = this.#state.orders.get(orderId);
    if (!record) throw new Error(`setOrderStatus: no order ${orderId}.`);
    const previous_status = record.order.status;
    if (previous_status === status) return { order: orderView(record), deliveryIds: [] };
    record.order.status = status;
    record.updated_at = isoAt(this.#clock);
    const { order_id, display_number, external_order_id, store_id } = record.order;
    const summary: OrderStatusChange = { order_id, display_number, external_order_id, previous_status, status, store_id };
    const deliveryIds = this.#deliveries.emit('order.status_changed', summary, this.#subscribers('order.status_changed', store_id));
    return { order: orderView(record), deliveryIds };
  }

  /** Endpoints subscribed to `event` whose key may see orders of `storeId`. */
  #subscribers(event: string, storeId: string): WebhookEndpointRecord[] {
    return [...this.#state.webhooks.values()].filter((endpoint) => {
      const key = this.#state.keys.get(endpoint.keyId);
      return endpoint.events.includes(event) && key !== undefined && !key.revoked && keyCoversStore(this.#state, key, storeId);
    });
  }

  #line(storeId: string, line: CreateOrderItem): OrderItem {
    const product = this.#state.products.get(line.external_id);
    const unit_price = line.unit_price ?? product?.stores.get(storeId)?.price_override ?? product?.price ?? 10;
    const quantity = line.quantity ?? 1;
    const variations = line.variations ?? [];
    const addons = line.addons ?? [];
    const perUnit = unit_price + variations.reduce((s, v) => s + v.price_modifier, 0) + addons.reduce((s, a) => s + a.price * a.quantity, 0);
    return {
      external_id: line.external_id,
      product_name: line.product_name ?? product?.name ?? line.external_id,
      quantity,
      unit_price,
      variations,
      addons,
      notes: line.notes ?? '',
      line_total: line.line_total ?? round2(perUnit * quantity),
    };
  }
}
