// The CLI's tables for people (`inbox dead`, `webhooks list`, `webhooks deliveries`): columns
// aligned, fitted to the terminal's width rather than wrapped by it. Optional columns are left out
// first, least useful first; then the text columns are cut, each value ending in `…`; ids are cut
// only when nothing else is left to give.

/** One column: its header (the field's snake_case name) and how it gives way on a narrow terminal. */
export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  /**
   * `text`: free text, cut to what is left (not below `min` while an optional column can go).
   * Other columns (ids to copy into another command among them) are shown whole, and cut only
   * when nothing else is left to give.
   */
  kind?: 'text';
  /** A text column's width before optional columns are left out instead (default 12). */
  min?: number;
  /** Left out when the table does not fit, the lowest first; undefined: always shown. */
  optional?: number;
}

const GAP = 2;
const ELLIPSIS = '…';
/** Below this nothing is cut: a value of 3 characters and an ellipsis says nothing. */
const FLOOR = 4;

/**
 * The width to fit: the terminal's columns, or `COLUMNS` when the output is not a terminal and
 * it is set; `undefined` (nothing cut) when piped into a file or another program.
 */
export function terminalWidth(stream: NodeJS.WriteStream = process.stdout): number | undefined {
  if (stream.isTTY) return stream.columns || 80;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : undefined;
}

/** `text` cut to `width` characters, the last one an ellipsis when anything was cut. */
export function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}${ELLIPSIS}`;
}

/**
 * The widths that share `room` among columns of these natural widths, widest cut first (none
 * below `floor`, none above its own): the largest cap whose total fits.
 */
function share(natural: readonly number[], room: number, floor: number): number[] {
  const total = (cap: number) => natural.reduce((sum, w) => sum + Math.min(w, Math.max(cap, floor)), 0);
  let cap = Math.max(0, ...natural);
  while (cap > floor && total(cap) > room) cap--;
  return natural.map((w) => Math.min(w, Math.max(cap, floor)));
}

/**
 * The widths of `shown` columns fitted into `width`: the text columns share what the others leave.
 * While an optional column could still go (`canDrop`), `undefined` when that would cut a text
 * column below its minimum or still not fit; otherwise text, then every column, is cut as needed.
 */
function fit<Row>(shown: readonly Column<Row>[], natural: readonly number[], width: number, canDrop: boolean): number[] | undefined {
  const room = width - GAP * (shown.length - 1);
  const total = (widths: readonly number[]) => widths.reduce((a, b) => a + b, 0);
  if (total(natural) <= room) return [...natural];
  const widths = [...natural];
  const text = shown.flatMap((c, i) => (c.kind === 'text' ? [i] : []));
  const others = total(natural) - text.reduce((sum, i) => sum + natural[i]!, 0);
  const shared = share(text.map((i) => natural[i]!), room - others, FLOOR);
  text.forEach((i, k) => (widths[i] = shared[k]!));
  if (canDrop) return total(widths) <= room && text.every((i) => widths[i]! >= Math.min(natural[i]!, shown[i]!.min ?? 12)) ? widths : undefined;
  // Nothing optional is left to go: every column gives way, ids too.
  return total(widths) <= room ? widths : share(widths, room, FLOOR);
}

/**
 * Rows under a header, columns two spaces apart. With `width`, the table fits it: optional columns
 * go, lowest first, until the text columns fit at their minimum; then they are cut to the room
 * left; when no optional column is left to go, text and then every column are cut further.
 * `(none)` for no rows.
 */
export function table<Row>(rows: readonly Row[], columns: readonly Column<Row>[], width?: number): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((c) => c.value(row)));
  const naturalOf = (i: number) => cells.reduce((widest, r) => Math.max(widest, r[i]!.length), columns[i]!.header.length);
  let shown = columns.map((_, i) => i);
  let widths = shown.map(naturalOf);
  if (width !== undefined) {
    for (;;) {
      const fitted = fit(shown.map((i) => columns[i]!), shown.map(naturalOf), width, shown.some((i) => columns[i]!.optional !== undefined));
      if (fitted) {
        widths = fitted;
        break;
      }
      const drop = shown.filter((i) => columns[i]!.optional !== undefined).reduce((a, b) => (columns[b]!.optional! < columns[a]!.optional! ? b : a));
      shown = shown.filter((i) => i !== drop);
    }
  }
  const line = (values: readonly string[]) => shown.map((i, k) => cut(values[i]!, widths[k]!).padEnd(widths[k]!)).join(' '.repeat(GAP)).trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n');
}
