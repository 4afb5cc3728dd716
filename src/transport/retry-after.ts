const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** The three HTTP-date forms of RFC 9110 5.6.7: IMF-fixdate, obsolete RFC 850, asctime. */
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/** The largest delay-seconds taken at its word (2^31 - 1, about 68 years): more is not a delay, it is garbage. */
const MAX_DELAY_SECONDS = 2 ** 31 - 1;

/**
 * Reads `Retry-After` (RFC 9110 10.2.3) exactly: delay-seconds (ASCII digits only) or an HTTP-date
 * (in case a proxy rewrites the service's seconds). Returns milliseconds, or `undefined` for
 * anything else (`-1`, `1.5`, ` 3`, seconds past 2^31 - 1), which `Date.parse` might read as a date
 * long past, i.e. no wait at all; the caller then falls back to its default pause.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  if (/^[0-9]+$/.test(value)) {
    const seconds = Number(value);
    return seconds <= MAX_DELAY_SECONDS ? seconds * 1000 : undefined;
  }
  let date: number;
  if (IMF_FIXDATE.test(value) || RFC_850.test(value)) date = Date.parse(value);
  else if (ASCTIME.test(value)) date = Date.parse(`${value} GMT`);
  else return undefined;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
