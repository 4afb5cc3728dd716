// An order payload as the dashboard shows it, serves as JSON and lets download: personal data
// masked unless `showPersonalData`. Masking is an allow-list by PLACE: free text can hold a phone or
// a name anywhere (`items[].notes`, an address's `complement`, `metadata`, fields the service adds
// later), so every string is masked except the fields known to carry none, at their place in the
// event and its order (dashboard.md; spec 2.7, 2.8, 6.1): ids and order numbers, statuses, the
// event's name, the sales channel, times, product, variation and add-on names, the delivery type and
// the payment's method and status. A field of one of those names elsewhere (a `status` inside
// `metadata`) is free text like any other. Numbers, booleans and nulls are shown. The keys of the
// known objects stay visible; a free-form object (`metadata`, the value of a field the SDK does not
// know) may use names or phones as keys, so its keys are masked too, only its shape kept.

export const MASK = '•••';

/** What a place in the payload holds: a string shown, a time, free text masked, or an object or array of known shape. */
type Place = 'shown' | 'time' | 'text' | { fields: Readonly<Record<string, Place>> } | { each: Place };

const text = 'text' as const;
const address: Place = { fields: { cep: text, street: text, number: text, complement: text, neighborhood: text, city: text, state: text } };
/** The order as `order.created` and `order.status_changed` send it (spec 2.7 and 2.8). */
const order: Place = {
  fields: {
    order_id: 'shown',
    display_number: 'shown',
    external_order_id: 'shown',
    source_channel: 'shown',
    status: 'shown',
    previous_status: 'shown',
    store_id: 'shown',
    created_at: 'time',
    customer: { fields: { name: text, phone: text, email: text, address } },
    items: {
      each: {
        fields: {
          external_id: 'shown',
          product_name: 'shown',
          variations: { each: { fields: { name: 'shown' } } },
          addons: { each: { fields: { name: 'shown' } } },
          notes: text,
        },
      },
    },
    delivery: { fields: { type: 'shown', address } },
    payment: { fields: { method: 'shown', status: 'shown' } },
    totals: { fields: {} },
    metadata: text,
  },
};
/** A delivery's body (spec 6.1); an event this SDK does not know keeps its `data`'s own field names. */
const body: Place = { fields: { event: 'shown', delivery_id: 'shown', ts: 'time', data: order } };

// A time: an ISO 8601 timestamp and nothing else.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Free text: every string masked, and every key (numbered, so that none collide); numbers and the shape kept. */
function freeForm(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(freeForm);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.values(value).map((inner, index) => [`${MASK}${index + 1}`, freeForm(inner)]));
  return typeof value === 'string' ? MASK : value;
}

function masked(value: unknown, place: Place): unknown {
  if (place === 'text') return freeForm(value);
  if (typeof value === 'string') return place === 'shown' || (place === 'time' && ISO_TIME.test(value)) ? value : MASK;
  if (typeof place !== 'object') return freeForm(value);
  if ('each' in place) return Array.isArray(value) ? value.map((each) => masked(each, place.each)) : freeForm(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return freeForm(value);
  // A field the SDK does not know keeps its name (the service's, not a customer's) and is free text.
  return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, masked(inner, Object.hasOwn(place.fields, name) ? place.fields[name]! : text)]));
}

/** A parsed payload with every string outside the allow-list replaced by {@link MASK}, and the keys of free-form objects too. */
export function maskPersonalData(payload: unknown): unknown {
  return masked(payload, body);
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
