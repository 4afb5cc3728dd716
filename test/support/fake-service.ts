import { IntegrationClient, type IntegrationClientOptions } from '../../src/index.ts';

export const API_KEY = 'service_k1d9Xa_S3cr3tPart0fTheKey';
export const SECRET_PART = 'S3cr3tPart0fTheKey';
export const BASE_URL = 'https://platform.example.com';
export const PHONE = '+55 11 91234-5678';

export interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  /** Parsed JSON body, or undefined. */
  body: unknown;
  /** `Date.now()` when the request reached the fake service (fake time in most tests). */
  at: number;
  /** The redirect mode the client asked fetch for. */
  redirect: RequestRedirect;
}

/** One answer of the fake service: a fresh Response each time, or a thrown error. */
export type Reply = (request: Recorded) => Response | Promise<Response>;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return () => new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function envelope(status: number, code: string, details?: unknown, headers: Record<string, string> = {}): Reply {
  return json(status, { error: { code, message: `${code} happened`, ...(details === undefined ? {} : { details }) } }, headers);
}

export function empty(status: number): Reply {
  return () => new Response(null, { status });
}

export function fails(error: Error): Reply {
  return () => {
    throw error;
  };
}

/** What undici throws: `TypeError('fetch failed')` whose cause carries the socket code. */
export function networkError(code: string, message = `connect ${code} 10.0.0.1:443`): Error {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(message), { code }) });
}

/**
 * An injected `fetch` answering from a script (the last reply repeats) and recording every request.
 */
export function fakeService(...replies: Reply[]) {
  const requests: Recorded[] = [];
  let next = 0;
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    const text = await request.text();
    const recorded: Recorded = { method: request.method, url: new URL(request.url), headers: request.headers, body: text === '' ? undefined : JSON.parse(text), at: Date.now(), redirect: request.redirect };
    requests.push(recorded);
    const reply = replies[Math.min(next++, replies.length - 1)];
    if (!reply) throw new Error('fakeService has no reply');
    return reply(recorded);
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

export function makeClient(fetch: typeof globalThis.fetch, options: Partial<IntegrationClientOptions> = {}): IntegrationClient {
  return new IntegrationClient({ apiKey: API_KEY, baseUrl: BASE_URL, fetch, random: () => 1, rateLimit: false, ...options });
}

/** Milliseconds between consecutive requests. */
export function gaps(requests: Recorded[]): number[] {
  return requests.slice(1).map((request, index) => request.at - requests[index]!.at);
}

/** Settles `promise` while fake time runs; returns its outcome without an unhandled rejection. */
export async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

export const ORDER = {
  order_id: '678a5aa3-3b6f-4507-8c5f-e8f8dc3bf364',
  display_number: '68341',
  external_order_id: 'MKT-1',
  source_channel: 'marketplace',
  status: 'confirmed',
  store_id: '5a702cfa-93ea-4c4e-98f3-3418f3d4e711',
  created_at: '2026-11-21T12:00:00.000Z',
  updated_at: '2026-11-21T12:05:00.000Z',
  customer: {
    name: 'João',
    phone: PHONE,
    email: 'joao@example.com',
    address: { cep: '01310-100', street: 'Av. Paulista', number: '1000', complement: 'ap 12', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' },
  },
  items: [{ external_id: 'SKU-1', product_name: 'Café', quantity: 1.5, unit_price: 19.9, variations: [], addons: [], notes: '', line_total: 29.85 }],
  delivery: { type: 'delivery', freight_price: 7.5, address: null },
  payment: { method: 'pix', status: 'paid', change_for: null },
  totals: { subtotal: 29.85, freight: 7.5, discount: 0, total: 37.35 },
  metadata: {},
};

export const HEALTH = {
  status: 'ok',
  merchant_id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  store_ids: [],
  scopes: ['catalog:write', 'orders:read'],
  ts: '2026-11-21T12:00:00.000Z',
};

export const ENTRY = { id: 'e1', type: 'credit', points: 50, description: null, created_at: '2026-11-21T12:00:00.000Z', idempotency_key: 'k' };
