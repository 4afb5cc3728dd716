// Black-box helpers for the conformance tests: a scripted fake service behind the public `fetch`
// option, and wire fixtures written from the specification only.

export const KEY = 'service_k7Conf_SuperSecretPart123';
export const KEY_SECRET = 'SuperSecretPart123';
export const BASE = 'https://platform.example.com';
export const API = `${BASE}/integration/v1`;
export const STORE = '0b8f8a52-3c5e-4d39-9d0c-2b7d7f6b8e11';
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  text: string;
  body: any;
}

export type Answer = (seen: Seen, n: number) => Response | Promise<Response>;

/** A fetch that records every request and answers from `answer` (n is 1-based). */
export function service(answer: Answer) {
  const calls: Seen[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const text = await request.text();
    const seen: Seen = { method: request.method, url: new URL(request.url), headers: request.headers, text, body: text ? JSON.parse(text) : undefined };
    calls.push(seen);
    return answer(seen, calls.length);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

/** Answers in turn; the last one repeats. */
export function sequence(...answers: Answer[]): Answer {
  return (seen, n) => answers[Math.min(n, answers.length) - 1]!(seen, n);
}

export const ok = (body: unknown, status = 200, headers: Record<string, string> = {}): Answer => () =>
  new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export const fail = (status: number, code: string, details?: unknown, headers: Record<string, string> = {}): Answer => () =>
  new Response(JSON.stringify({ error: { code, message: `${code} happened`, ...(details === undefined ? {} : { details }) } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

export const refused: Answer = () => {
  throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }) });
};
export const reset: Answer = () => {
  throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
};

export const HEALTH = {
  status: 'ok',
  merchant_id: '8d4c0e0e-2f7a-4c55-9a3e-0d1b8d7c6a55',
  store_ids: [],
  scopes: ['catalog:write', 'stock:write', 'orders:read', 'webhooks:manage', 'loyalty:read', 'loyalty:write'],
  ts: '2025-01-01T12:00:00.000Z',
};

const ADDRESS = { cep: '01310-100', street: 'Av. Paulista', number: '1000', complement: 'apto 12', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' };

export const ORDER = {
  order_id: '5b0c7c1e-8d1a-4f7e-9a51-0f6f3f1f2c3d',
  display_number: '#1042',
  external_order_id: null,
  source_channel: 'catalog',
  status: 'confirmed',
  store_id: STORE,
  created_at: '2025-01-01T12:00:00.000Z',
  customer: { name: 'Maria Silva', phone: '+5511912345678', email: 'maria@example.com', address: ADDRESS },
  items: [
    {
      external_id: 'SKU-1',
      product_name: 'Coffee',
      quantity: 2,
      unit_price: 10,
      variations: [{ name: 'Large', price_modifier: 2 }],
      addons: [{ name: 'Sugar', quantity: 1, price: 0.5 }],
      notes: 'no ice',
      line_total: 24.5,
    },
  ],
  delivery: { type: 'delivery', freight_price: 5, address: { cep: ADDRESS.cep, street: ADDRESS.street, number: ADDRESS.number, neighborhood: ADDRESS.neighborhood, city: ADDRESS.city, state: ADDRESS.state } },
  payment: { method: 'pix', status: 'paid', change_for: null },
  totals: { subtotal: 24.5, freight: 5, discount: 0, total: 29.5 },
  metadata: {},
};

export const STATUS_CHANGE = {
  order_id: ORDER.order_id,
  display_number: '#1042',
  external_order_id: null,
  previous_status: 'confirmed',
  status: 'cancelled',
  store_id: STORE,
};

export const CREATED_WEBHOOK = {
  id: '3f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
  url: 'https://erp.example.com/hooks',
  events: ['order.created'],
  secret: 'whsec_abcdefghijklmnop',
  warning: 'shown once',
  created_at: '2025-01-01T12:00:00.000Z',
};

export const ENTRY = { id: 'e1', type: 'credit', points: 10, description: null, created_at: '2025-01-01T12:00:00.000Z', idempotency_key: 'k' };
export const CUSTOMER = { id: 'c1', name: 'Maria', phone: '+5511912345678', external_id: 'CUST-1' };

/** Answers a bulk batch the way spec 4.2 describes: created for every item. */
export const bulkOk: Answer = (seen) => {
  const items = seen.body.items as { external_id: string; store_id?: string }[];
  return Response.json({
    sync_id: crypto.randomUUID(),
    summary: { created: items.length, updated: 0, errors: 0 },
    results: items.map((item, index) => ({ index, external_id: item.external_id, status: 'created' })),
  });
};

export const stockOk: Answer = (seen) => {
  const items = seen.body.items as { external_id: string; store_id: string }[];
  return Response.json({
    sync_id: crypto.randomUUID(),
    summary: { updated: items.length, errors: 0 },
    results: items.map((item, index) => ({ index, external_id: item.external_id, store_id: item.store_id, status: 'updated' })),
  });
};
