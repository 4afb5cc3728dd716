/**
 * The comparison key of a Brazilian phone: area code plus the last 8 digits. `+55`, a trunk `0`,
 * spaces, dashes and parentheses are dropped, and a mobile's ninth digit (a `9` after the area
 * code) is removed, so `+55 (11) 98765-4321`, `11987654321` and `1187654321` are one number.
 * Null when the text is no Brazilian number.
 */
export function phoneKey(phone: string): string | null {
  let digits = phone.replace(/\D/g, '');
  if ((digits.length === 12 || digits.length === 13) && digits.startsWith('55')) digits = digits.slice(2);
  else if ((digits.length === 11 || digits.length === 12) && digits.startsWith('0')) digits = digits.slice(1);
  if (digits.length === 11 && digits[2] === '9') digits = digits.slice(0, 2) + digits.slice(3);
  return digits.length === 10 ? digits : null;
}
