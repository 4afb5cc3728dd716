// An order payload as the dashboard shows it: personal data masked unless `showPersonalData`.
// Spec 2.7: the customer's name, phone, e-mail and address (the whole customer object), and the
// delivery address. Any field named like a contact (phone, email, cpf, document) is masked wherever
// it sits, for events this SDK does not know.

export const MASK = '•••';

const CONTACT_KEYS = new Set(['phone', 'email', 'cpf', 'document']);

function maskAll(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskAll);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, maskAll(inner)]));
  return value === null ? null : MASK;
}

function maskContacts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskContacts);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (CONTACT_KEYS.has(key.toLowerCase())) return [key, maskAll(inner)];
      // Every field of the customer (name, phone, e-mail, address, and any a later version adds).
      if (key === 'customer') return [key, maskAll(inner)];
      if (key === 'delivery' && typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
        const delivery = { ...(inner as Record<string, unknown>) };
        if ('address' in delivery) delivery.address = maskAll(delivery.address);
        return [key, maskContacts(delivery)];
      }
      return [key, maskContacts(inner)];
    }),
  );
}

/**
 * The payload as text to show: pretty JSON, masked unless `showPersonalData`. A payload that is
 * not JSON is shown only with `showPersonalData` (nothing tells what it holds).
 */
export function payloadForDisplay(payload: string | null, showPersonalData: boolean): string {
  if (payload === null) return 'The payload was cleared by retention (the entry is kept for deduplication).';
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return showPersonalData ? payload : `Not JSON (${payload.length} characters); hidden, as it may hold personal data.`;
  }
  return JSON.stringify(showPersonalData ? parsed : maskContacts(parsed), null, 2);
}
