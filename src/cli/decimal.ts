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

/** `12,5`, `-0,75`, `1.234,56`: a decimal written with a comma, as a spreadsheet in a comma locale (pt-BR) saves it. */
const DECIMAL_COMMA = /^-?(\d{1,3}(\.\d{3})+|\d+),\d+$/;

/** Whether a cell holds a number written with a decimal comma (never converted: see {@link DecimalStyle}). */
export function writtenWithDecimalComma(text: string): boolean {
  return DECIMAL_COMMA.test(text.trim());
}

/** How many numeric cells with a fractional part decide how a file writes its decimals. */
export const DECIDING_CELLS = 10;

/** The first cell of a file written with a decimal comma: named when the whole file is refused. */
interface CommaCell {
  line: number;
  column: string;
  text: string;
}

/**
 * How a CSV writes its decimal numbers, judged on its first {@link DECIDING_CELLS} numeric cells with
 * a fractional part (`12.5` or `12,5`). When more than half of them use a comma, that is how the file
 * writes its numbers (a pt-BR export): `refusesFile` is then the message that refuses the whole
 * file. Otherwise a cell with a decimal comma is a typo among good numbers: an item error. A decimal
 * comma is never converted either way: `12,5` could as well be twelve thousand five hundred.
 */
export class DecimalStyle {
  #points = 0;
  #commas = 0;
  #firstComma: CommaCell | undefined;

  /** A numeric cell written with a decimal point. */
  point(): void {
    if (this.#deciding()) this.#points++;
  }

  /** A numeric cell written with a decimal comma; returns the item error for its row. */
  comma(cell: CommaCell): string {
    if (this.#deciding()) {
      this.#commas++;
      this.#firstComma ??= cell;
    }
    return `${cell.column} is written with a decimal comma ("${cell.text.trim()}"); numbers are never converted: write it with a decimal point`;
  }

  /**
   * Once the deciding cells are seen (or at the end of the file, `ended`, when it has fewer): the
   * message refusing the whole file when most of them use a comma, else `undefined`.
   */
  refusesFile(ended = false): { line: number; message: string } | undefined {
    if ((this.#deciding() && !ended) || this.#commas <= this.#points || !this.#firstComma) return undefined;
    const { line, column, text } = this.#firstComma;
    return {
      line,
      message: `the file writes its decimal numbers with a comma (${column} "${text.trim()}"), as a spreadsheet set to a comma locale such as pt-BR saves them, and numbers are never converted: save it with a decimal point (Excel: File › Options › Advanced, untick "Use system separators", decimal separator ".")`,
    };
  }

  #deciding(): boolean {
    return this.#points + this.#commas < DECIDING_CELLS;
  }
}
