/**
 * Finds the API key (and its secret part alone) in text a server or a `fetch` sent back, in every
 * form it may take: as is, percent-encoded (any case) in a header such as `Location`, JSON-escaped
 * in a body (`\u0073`, `\/`), or any mix of these, character by character.
 */
export class Redactor {
  readonly #pattern: RegExp | undefined;

  constructor(secrets: readonly string[]) {
    const alternatives = secrets.filter((secret) => secret !== '').sort((a, b) => b.length - a.length).map(secretPattern);
    this.#pattern = alternatives.length === 0 ? undefined : new RegExp(alternatives.join('|'), 'g');
  }

  /** `text` with every form of every secret replaced by `[redacted]` (which is JSON-safe). */
  scrub(text: string): string {
    if (this.#pattern === undefined) return text;
    this.#pattern.lastIndex = 0;
    return text.replace(this.#pattern, '[redacted]');
  }

  /** A parsed JSON value with every string (and every property name) scrubbed. */
  scrubValue(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (typeof value !== 'object' || value === null || depth > 64) return value;
    if (Array.isArray(value)) return value.map((item) => this.scrubValue(item, depth + 1));
    const clean: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(clean, this.scrub(key), { value: this.scrubValue(item, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return clean;
  }
}

/** One character: itself, `%XX` in either case, `\uXXXX` in either case, and its short JSON escape. */
function charPattern(char: string): string {
  const code = char.charCodeAt(0);
  const hex2 = code.toString(16).padStart(2, '0');
  const hex4 = code.toString(16).padStart(4, '0');
  const forms = [`\\\\u${anyCase(hex4)}`];
  if (char === '"' || char === '\\' || char === '/') forms.push(`\\\\${escapeRegExp(char)}`);
  if (code < 0x80) forms.push(`%${anyCase(hex2)}`);
  // The character itself last: a backslash that starts an escape is matched as that escape first.
  forms.push(escapeRegExp(char));
  return `(?:${forms.join('|')})`;
}

function secretPattern(secret: string): string {
  return [...secret].map(charPattern).join('');
}

function anyCase(hex: string): string {
  return [...hex].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('');
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}
