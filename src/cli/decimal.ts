// Numbers from a file, kept exactly as written. A decimal text becomes a JS number only when that
// number writes back as the same decimal (what JSON.stringify will send); otherwise the row is an
// item error, never a silently rounded price.

const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** `2.5000` → `2.5`, `-0.0` → `0`: the shortest form of the same decimal value. */
function canonical(text: string): string {
  let [whole = '', fraction = ''] = text.split('.');
  fraction = fraction.replace(/0+$/, '');
  const negative = whole.startsWith('-');
  if (negative) whole = whole.slice(1);
  const body = fraction === '' ? whole : `${whole}.${fraction}`;
  return negative && body !== '0' ? `-${body}` : body;
}

/**
 * Reads a decimal exactly: `"19.90"` → 19.9, `"12.345"` → 12.345. Returns an error message for text
 * that is not a plain decimal or that a JS number cannot carry exactly (more than ~15 significant digits).
 */
export function readDecimal(text: string, field: string): number | { error: string } {
  const trimmed = text.trim();
  if (!DECIMAL.test(trimmed)) return { error: `${field} must be a plain decimal number like 19.90, got "${trimmed}"` };
  const value = Number(trimmed);
  if (String(value) !== canonical(trimmed)) {
    return { error: `${field} ${trimmed} has more digits than can be sent exactly; shorten it` };
  }
  return Object.is(value, -0) ? 0 : value;
}
