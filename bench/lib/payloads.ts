// `order.created` delivery bodies of a given size, shaped as spec 2.7 (the SDK's OrderSchema), so
// that the typed parse does the work it does on a real delivery. The size grows with the item
// count, as it does for real orders.

const STORE_ID = '5a702cfa-93ea-4c4e-98f3-3418f3d4e711';

function address() {
  return { cep: '01310-100', street: 'Av. Paulista', number: '1000', complement: 'ap 12', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' };
}

function item(i: number) {
  return {
    external_id: `SKU-${String(i).padStart(6, '0')}`,
    product_name: `Café especial torra média 500g #${i}`,
    quantity: 1 + (i % 3),
    unit_price: 19.9 + (i % 7),
    variations: [{ name: 'Moído', price_modifier: 0 }],
    addons: i % 2 === 0 ? [{ name: 'Embalagem presente', quantity: 1, price: 4.5 }] : [],
    notes: i % 5 === 0 ? 'sem açúcar' : null,
    line_total: (1 + (i % 3)) * (19.9 + (i % 7)),
  };
}

function order(items: number) {
  const lines = Array.from({ length: items }, (_, i) => item(i));
  const subtotal = lines.reduce((sum, line) => sum + line.line_total, 0);
  return {
    order_id: '678a5aa3-3b6f-4507-8c5f-e8f8dc3bf364',
    display_number: '68341',
    external_order_id: null,
    source_channel: 'catalog',
    status: 'confirmed',
    store_id: STORE_ID,
    created_at: '2026-11-21T12:00:00.000Z',
    customer: { name: 'João da Silva', phone: '+55 11 98765-4321', email: 'joao@example.com', address: address() },
    items: lines,
    delivery: { type: 'delivery', freight_price: 7.5, address: address() },
    payment: { method: 'pix', status: 'paid', change_for: null },
    totals: { subtotal, freight: 7.5, discount: 0, total: subtotal + 7.5 },
    metadata: { campaign: 'black-friday' },
  };
}

export interface OrderEvent {
  event: 'order.created';
  delivery_id: string;
  ts: number;
  data: ReturnType<typeof order>;
}

export const DELIVERY_ID = 'eb8ac8ce-8a24-4e6b-b313-8131c541013d';

/** The smallest `order.created` delivery whose JSON is at least `bytes` long. */
export function orderCreatedOfSize(bytes: number, ts: number): { event: OrderEvent; json: string } {
  for (let items = 1; ; items += 1) {
    const event: OrderEvent = { event: 'order.created', delivery_id: DELIVERY_ID, ts, data: order(items) };
    const json = JSON.stringify(event);
    if (Buffer.byteLength(json) >= bytes) return { event, json };
  }
}
