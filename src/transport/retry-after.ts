/**
 * Reads `Retry-After` (RFC 9110 10.2.3): delay-seconds, or an HTTP date. Returns milliseconds, or
 * `undefined` when absent or unreadable. The service sends whole seconds; a date is accepted in
 * case a proxy rewrites it.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
