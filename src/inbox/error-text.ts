/**
 * What the inbox keeps of a handler's error (`lastError`, shown by `entries()` and `inbox dead`):
 * a short text without personal data. Handlers' errors often quote what they were given (a
 * validation message with the customer's e-mail, a database error with the whole row), and the
 * stored text outlives the payload's retention. So the text is cut, the personal values of the
 * entry's own payload are replaced, and so is anything shaped like an e-mail address or a phone
 * number, as the client replaces its key in what a server sent back (src/transport/redact.ts).
 */

/** The longest `lastError` kept, in characters. */
export const MAX_ERROR_TEXT = 300;
/** How much of a message is looked at: the scrub must stay cheap whatever a handler throws. */
const MAX_SCANNED = 4000;
/** Values this short (a state's "SP") are too common to redact without mangling the message. */
const MIN_VALUE_LENGTH = 3;

const EMAIL = /[^\s@"'<>()[\]{},;:]+@[^\s@"'<>()[\]{},;:]+\.[A-Za-z]{2,}/g;
// Digits with the separators phone numbers are written with; kept when the count of digits is
// not a phone's (8 to 15, E.164), so that ids and UUIDs survive.
const PHONE_LIKE = /(?<![\w-])\+?\(?\d[\d\s().-]{6,}\d(?![\w-])/g;
// eslint-disable-next-line no-control-regex -- control characters (NUL above all: Postgres text refuses it) are what is removed
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
// V8's JSON.parse quotes the text it was given: `Unexpected token 'M', "Mariana Ze"... is not valid JSON`,
// `..."": 1, "b": Mariana}" is not valid JSON` around the error, or the whole text when it is short.
// The excerpt may hold quotes of its own, so it runs from the quote after the token (or after a
// message boundary) to the last quote before "is not valid JSON".
const JSON_EXCERPT_AFTER_TOKEN = /(Unexpected token '[\s\S]{1,2}', )(?:\.\.\.)?"[\s\S]*?"(?:\.\.\.)?(?= is not valid JSON)/g;
const JSON_EXCERPT_ALONE = /(^|: )"[\s\S]*?"(?:\.\.\.)?(?= is not valid JSON)/gm;

/** The text stored as `lastError` for `error`, thrown by the handler of the entry whose payload is `payload`. */
export function errorText(error: unknown, payload: string | null): string {
  let text = describe(error).slice(0, MAX_SCANNED);
  for (const value of personalValues(payload)) text = replaceAll(text, value);
  text = scrubPatterns(text);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT - 1)}…` : text;
}

/**
 * E-mail- and phone-shaped text, the payload excerpts of JSON parse errors and control characters
 * replaced: what can be done without the payload.
 */
export function scrubPatterns(text: string): string {
  return text
    .replace(JSON_EXCERPT_AFTER_TOKEN, '$1[excerpt]')
    .replace(JSON_EXCERPT_ALONE, '$1[excerpt]')
    .replace(CONTROL, ' ')
    .replace(EMAIL, '[email]')
    .replace(PHONE_LIKE, (match) => {
      const digits = match.replace(/\D/g, '').length;
      return digits >= 8 && digits <= 15 ? '[phone]' : match;
    });
}

function describe(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'The handler threw a value that cannot be shown as text.';
  }
}

function replaceAll(text: string, value: string): string {
  let result = text.split(value).join('[redacted]');
  // The same value as it appears inside a JSON text the message may quote.
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) result = result.split(escaped).join('[redacted]');
  return result;
}

/** The strings under the order's personal fields: `customer`, any address, and item notes; longest first. */
function personalValues(payload: string | null): string[] {
  if (payload === null) return [];
  let data: unknown;
  try {
    data = (JSON.parse(payload) as { data?: unknown } | null)?.data;
  } catch {
    return [];
  }
  const values = new Set<string>();
  const collect = (value: unknown, personal: boolean, depth: number): void => {
    if (depth > 16) return;
    if (typeof value === 'string') {
      if (personal && value.length >= MIN_VALUE_LENGTH) values.add(value);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, item] of Object.entries(value)) collect(item, personal || /customer|address|notes|name|phone|email|document/i.test(key), depth + 1);
  };
  collect(data, false, 0);
  return [...values].sort((a, b) => b.length - a.length);
}
