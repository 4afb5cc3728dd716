/**
 * Decimal places of a number as JSON will carry it: counted on the shortest string that reads back
 * as the same number (what `String` and `JSON.stringify` write), exponent forms included.
 * `0.1 + 0.2` has 17 (`0.30000000000000004`), `1e-7` has 7, `1.5e21` has 0.
 */
export function decimalPlaces(value: number): number {
  if (Number.isInteger(value)) return 0; // written without a fraction (or as 1e+21: none either)
  const text = String(Math.abs(value));
  const e = text.indexOf('e');
  const mantissaEnd = e === -1 ? text.length : e;
  const dot = text.indexOf('.');
  const fraction = dot === -1 || dot > mantissaEnd ? 0 : mantissaEnd - dot - 1;
  return Math.max(0, fraction - (e === -1 ? 0 : Number(text.slice(e + 1))));
}
