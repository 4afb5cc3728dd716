// An order payload as the dashboard shows it, serves as JSON and lets download: personal data
// masked unless `showPersonalData`. Masking is an allow-list: free text can hold a phone or a name
// anywhere (`items[].notes`, an address's `complement`, `metadata`, fields the service adds later),
// so every string is masked except the fields known to carry none (dashboard.md): ids and order
// numbers, statuses, the event's name, the sales channel, times, product, variation and add-on
// names, the delivery type and the payment's method and status. Numbers, booleans and nulls are
// shown; keys and the payload's shape stay visible.

export const MASK = '•••';

/** Ids and statuses, wherever they sit: a field of these names holds no personal data. */
const SAFE_ANYWHERE = new Set(['order_id', 'display_number', 'external_order_id', 'store_id', 'delivery_id', 'status', 'previous_status']);

/** Fields known by their place (`[]` stands for any array element). */
const SAFE_PATHS = new Set([
  'event',
  'data.source_channel',
  'data.items[].external_id',
  'data.items[].product_name',
  'data.items[].variations[].name',
  'data.items[].addons[].name',
  'data.delivery.type',
  'data.payment.method',
  'data.payment.status',
]);

// A time: a field named `ts` or `…_at` whose value is an ISO 8601 timestamp and nothing else.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const isTime = (key: string, value: string) => (key === 'ts' || key.endsWith('_at')) && ISO_TIME.test(value);

function masked(value: unknown, path: string, key: string): unknown {
  if (Array.isArray(value)) return value.map((each) => masked(each, `${path}[]`, key));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, masked(inner, path === '' ? name : `${path}.${name}`, name)]));
  }
  if (typeof value !== 'string') return value;
  return SAFE_ANYWHERE.has(key) || SAFE_PATHS.has(path) || isTime(key, value) ? value : MASK;
}

/** A parsed payload with every string outside the allow-list replaced by {@link MASK}. */
export function maskPersonalData(payload: unknown): unknown {
  return masked(payload, '', '');
}

/** What the payload of an entry is, for the entry page, its JSON route and its download. */
export type PayloadView =
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  /** Not JSON, and masked: nothing tells what it holds. */
  | { kind: 'hidden'; length: number }
  | { kind: 'cleared' };

export function payloadView(payload: string | null, showPersonalData: boolean): PayloadView {
  if (payload === null) return { kind: 'cleared' };
  try {
    const parsed: unknown = JSON.parse(payload);
    return { kind: 'json', value: showPersonalData ? parsed : maskPersonalData(parsed) };
  } catch {
    return showPersonalData ? { kind: 'text', text: payload } : { kind: 'hidden', length: payload.length };
  }
}

/** The payload as text to show: pretty JSON, masked unless `showPersonalData`. */
export function payloadForDisplay(payload: string | null, showPersonalData: boolean): string {
  const view = payloadView(payload, showPersonalData);
  switch (view.kind) {
    case 'cleared':
      return 'The payload was cleared by retention (the entry is kept for deduplication).';
    case 'hidden':
      return `Not JSON (${view.length} characters); hidden, as it may hold personal data.`;
    case 'text':
      return view.text;
    case 'json':
      return JSON.stringify(view.value, null, 2);
  }
}
