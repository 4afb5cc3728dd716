/**
 * Decimal places of a number as JSON will carry it: counted on the shortest string that reads back
 * as the same number (what `String` and `JSON.stringify` write), exponent forms included.
 * `0.1 + 0.2` has 17 (`0.30000000000000004`), `1e-7` has 7, `1.5e21` has 0.
 */
export function decimalPlaces(value: number): number {
  const [mantissa = '', exponent = '0'] = String(Math.abs(value)).split('e');
  const fraction = mantissa.split('.')[1] ?? '';
  return Math.max(0, fraction.length - Number(exponent));
}
