/**
 * Reads `Retry-After` (RFC 9110 10.2.3): delay-seconds (digits only) or an HTTP-date (IMF-fixdate,
 * or the obsolete RFC 850 and asctime forms). Returns milliseconds, or `undefined` when absent or
 * anything else: `-1`, `+3`, `1,2` or `1.5` are not delays, and `Date.parse` would read some of them
 * as dates in 2001 (no wait at all). The caller then uses its default pause.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE.some((format) => format.test(text))) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
const HTTP_DATE = [
  new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`), // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`), // RFC 850
  new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`), // asctime: Sun Nov  6 08:49:37 1994
];
