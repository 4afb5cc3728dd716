// A catalog or stock CSV as spreadsheets write it: the delimiter (`,`, `;` as Excel writes it where
// the decimal separator is a comma, as in Brazil, or tab) detected from the header line or given
// with --delimiter, a BOM, CRLF, quoted fields holding delimiters or line breaks. Yields each item
// with the physical line it starts on; consecutive catalog rows with the same external_id are one
// product with several stores[]. Numbers are read exactly; a decimal comma is refused, never converted.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import { parse as parseCsvSync } from 'csv-parse/sync';
import { UsageError } from './config.ts';
import { DecimalStyle, readDecimal, writtenWithDecimalComma } from './decimal.ts';
import { fileError, readText } from './file-text.ts';

const PRODUCT_COLUMNS = ['external_id', 'name', 'price', 'gtin', 'category'] as const;
const STORE_COLUMNS = ['store_id', 'stock_quantity', 'price_override', 'active'] as const;
const STOCK_COLUMNS = ['external_id', 'store_id', 'stock_quantity', 'price_override', 'active'] as const;
const NUMERIC = new Set(['price', 'stock_quantity', 'price_override']);

/** `--delimiter` by name: `,` `;` or `tab`. */
export const DELIMITER_NAMES = [',', ';', 'tab'] as const;
type Delimiter = ',' | ';' | '\t';
const DELIMITERS: readonly Delimiter[] = [',', ';', '\t'];

/** How to read the CSV: its text encoding (as `TextDecoder` names it) and `--delimiter`, if given. */
export interface CsvOptions {
  encoding: string;
  delimiter?: string;
}

/** One item of the CSV: `item` to send, or `error` (the message of a local rejection). */
export interface CsvItem {
  line: number;
  external_id: string;
  store_id?: string;
  item?: Record<string, unknown>;
  error?: string;
}

const shown = (delimiter: Delimiter) => (delimiter === '\t' ? 'tab' : `"${delimiter}"`);

/** The first line holding anything (the header), decoded, without its BOM, and its line number. */
async function headerLine(file: string, encoding: string): Promise<{ text: string; line: number }> {
  let text = '';
  for await (const chunk of readText(file, encoding)) {
    text += chunk;
    if (/[^\r\n\uFEFF][^\r\n]*(\r|\n)/.test(text) || text.length > 1024 * 1024) break;
  }
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const at = lines.findIndex((line) => line !== '');
  return at === -1 ? { text: '', line: 1 } : { text: lines[at]!, line: at + 1 };
}

function split(header: string, delimiter: Delimiter): string[] {
  try {
    return (parseCsvSync(header, { delimiter, relax_quotes: true }) as string[][])[0] ?? [header];
  } catch {
    return [header];
  }
}

/**
 * The header's columns at `--delimiter`, or at the delimiter that splits it into the most known
 * columns (the most columns when none is known: the delimiter seen most).
 */
function columnsOf(header: string, allowed: ReadonlySet<string>, given: Delimiter | undefined) {
  let best: { delimiter: Delimiter; columns: string[]; known: number } | undefined;
  for (const delimiter of given === undefined ? DELIMITERS : [given]) {
    const columns = split(header, delimiter);
    const known = columns.filter((column) => allowed.has(column)).length;
    if (!best || known > best.known || (known === best.known && columns.length > best.columns.length)) best = { delimiter, columns, known };
  }
  return best!;
}

/** A header that names unknown columns, or lacks a required one, stops the run on its line. */
function checkHeader(header: { text: string; line: number }, kind: 'catalog' | 'stock', given: Delimiter | undefined): Delimiter {
  const allowed = new Set<string>(kind === 'catalog' ? [...PRODUCT_COLUMNS, ...STORE_COLUMNS] : STOCK_COLUMNS);
  const { delimiter, columns, known } = columnsOf(header.text, allowed, given);
  const unknown = columns.filter((column) => !allowed.has(column));
  const list = `unknown column ${unknown.map((column) => `"${column.length > 60 ? `${column.slice(0, 59)}…` : column}"`).join(', ')}; allowed: ${[...allowed].join(',')}`;
  if (unknown.length > 0 && known > 0) fileError(header.line, `${list} (the header split at ${shown(delimiter)})`);
  if (unknown.length > 0) {
    // Nothing known: most likely the file uses another delimiter than the one the header was split at.
    const other = given === undefined ? undefined : DELIMITERS.find((d) => d !== given && columnsOf(header.text, allowed, d).known > 0);
    const at = given !== undefined
      ? `--delimiter ${shown(given)}${other === undefined ? '' : ` (it does at ${shown(other)}: pass --delimiter ${other === '\t' ? 'tab' : other}, or leave --delimiter out to detect it)`}`
      : columns.length > 1 ? `${shown(delimiter)}, the delimiter seen in it` : ', ; or tab: none of them is in it';
    const suggestion = given === undefined ? '; if the file uses another delimiter, name it with --delimiter , ; or tab' : '';
    fileError(header.line, `the header does not split into known columns at ${at}: ${list}${suggestion}`);
  }
  if (!columns.includes('external_id')) fileError(header.line, 'the header has no external_id column');
  if (kind === 'stock' && !columns.includes('store_id')) fileError(header.line, 'the header has no store_id column');
  return delimiter;
}

function delimiterOf(name: string | undefined): Delimiter | undefined {
  if (name === undefined) return undefined;
  if (name === 'tab' || name === '\t') return '\t';
  if (name === ',' || name === ';') return name;
  throw new UsageError(`--delimiter must be , ; or tab, got "${name}".`);
}

/**
 * Line breaks in a record's raw text. csv-parse keeps only the first character of each record
 * delimiter there (`\r` of a CRLF file's `\r\n`) but whole line breaks inside quoted fields.
 */
function lineBreaks(raw: string): number {
  return raw.match(/\r\n|\r|\n/g)?.length ?? 0;
}

interface Row {
  line: number;
  fields: Record<string, string>;
}

/**
 * Rows with the physical line each starts on. csv-parse's `info.lines` is not the start line (it
 * counts blank lines and bare CRs its own way), so lines are counted on each record's raw text,
 * which begins with the blank lines skipped before it. They are counted as csv-parse parses, in
 * `on_record`: a parse error ends the stream at once, dropping the records parsed before it in the
 * same chunk, and a count kept by the consumer would name a line thousands of lines early.
 */
async function* csvRows(file: string, kind: 'catalog' | 'stock', options: CsvOptions): AsyncGenerator<Row> {
  const header = await headerLine(file, options.encoding);
  if (header.text === '') return; // an empty file: no items
  const delimiter = checkHeader(header, kind, delimiterOf(options.delimiter));
  let linesBefore = header.line;
  // With `raw`, csv-parse hands on_record `{ record, raw }`; what it returns is what the stream yields.
  const onRecord = ({ record: fields, raw }: { record: Record<string, string>; raw: string }): Row => {
    const line = linesBefore + lineBreaks(/^[\r\n]*/.exec(raw)![0]) + 1;
    linesBefore += lineBreaks(raw);
    return { line, fields };
  };
  const source = options.encoding === 'utf-8' ? createReadStream(file) : Readable.from(readText(file, options.encoding));
  const parser = source.pipe(parseCsv({ bom: true, columns: true, raw: true, skip_empty_lines: true, delimiter, on_record: onRecord as never }));
  try {
    yield* parser as AsyncIterable<Row>;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // The bad record starts the line after the last one parsed: csv-parse's own count (also in its
    // message) takes a CRLF inside quotes for two lines.
    const message = (error as Error).message.split('\n')[0]!.replace(/ on line \d+/, '');
    throw new UsageError(`Line ${linesBefore + 1}: the CSV cannot be read (${message}); fix the file and run again (nothing was sent).`);
  }
}

/** One row's fields by wire name (an empty cell means the field is absent), or the row's item error. */
function rowFields(row: Row, columns: readonly string[], decimals: DecimalStyle): { fields: Record<string, unknown>; error?: string } {
  const fields: Record<string, unknown> = {};
  let error: string | undefined;
  for (const column of columns) {
    const raw = row.fields[column];
    if (raw === undefined || raw === '') continue;
    if (column === 'gtin' && SCIENTIFIC.test(raw.trim())) {
      error ??= scientificGtin(raw.trim());
      continue;
    }
    if (NUMERIC.has(column) && writtenWithDecimalComma(raw)) {
      error ??= decimals.comma({ line: row.line, column, text: raw });
      const refusal = decimals.refusesFile();
      if (refusal) fileError(refusal.line, refusal.message);
      continue;
    }
    fields[column] = cellValue(column, raw, row.line, decimals);
  }
  return { fields, error };
}

function cellValue(column: string, raw: string, line: number, decimals: DecimalStyle): unknown {
  if (NUMERIC.has(column)) {
    if (column === 'price_override' && raw.trim() === 'null') return null;
    const value = readDecimal(raw, column);
    if (typeof value !== 'number') fileError(line, value.error);
    if (raw.includes('.')) {
      decimals.point();
      const refusal = decimals.refusesFile();
      if (refusal) fileError(refusal.line, refusal.message);
    }
    return value;
  }
  if (column === 'active') {
    const value = ACTIVE.get(raw.trim().toLowerCase());
    if (value === undefined) fileError(line, `active must be true or false (or VERDADEIRO or FALSO, as Excel in Portuguese writes them), got "${raw}"`);
    return value;
  }
  return raw;
}

/** `active` as spreadsheets write a boolean: `true`/`false` in any case (Excel in English: TRUE), or Excel in Portuguese's VERDADEIRO/FALSO. */
const ACTIVE = new Map([
  ['true', true],
  ['false', false],
  ['verdadeiro', true],
  ['falso', false],
]);

/**
 * `7,891E+12`, `7.89100E+12`: how Excel shows a number too long for its cell, and saves it so in a
 * CSV, its last digits gone. A gtin is text of digits: one written so cannot be sent.
 */
const SCIENTIFIC = /^\d+([.,]\d+)?E[+-]?\d+$/i;

function scientificGtin(raw: string): string {
  return `gtin is written in scientific notation ("${raw}"), as Excel shows a long number, and its digits are lost: format the gtin column as text (Format Cells › Text), type the codes again and save`;
}

/** Every item of a CSV in order. Throws `UsageError` when the file cannot be read as a catalog or stock CSV. */
export async function* csvItems(file: string, kind: 'catalog' | 'stock', options: CsvOptions): AsyncGenerator<CsvItem> {
  const decimals = new DecimalStyle();
  if (kind === 'stock') {
    for await (const row of csvRows(file, kind, options)) {
      const { fields: item, error } = rowFields(row, STOCK_COLUMNS, decimals);
      yield { line: row.line, external_id: String(item.external_id ?? ''), store_id: String(item.store_id ?? ''), ...(error === undefined ? { item } : { error }) };
    }
  } else {
    yield* catalogItems(csvRows(file, kind, options), decimals);
  }
  const refusal = decimals.refusesFile(true);
  if (refusal) fileError(refusal.line, refusal.message);
}

/** Consecutive rows with the same external_id are one product with several stores[]. */
async function* catalogItems(rows: AsyncIterable<Row>, decimals: DecimalStyle): AsyncGenerator<CsvItem> {
  let current: { line: number; product: Record<string, unknown>; stores: Record<string, unknown>[]; error?: string } | undefined;
  const finish = (): CsvItem | undefined => {
    if (!current) return undefined;
    const { line, product, stores, error } = current;
    const external_id = String(product.external_id ?? '');
    if (error) return { line, external_id, error };
    return { line, external_id, item: stores.length > 0 ? { ...product, stores } : product };
  };
  for await (const row of rows) {
    const product = rowFields(row, PRODUCT_COLUMNS, decimals);
    const store = rowFields(row, STORE_COLUMNS, decimals);
    if (current && product.fields.external_id !== undefined && product.fields.external_id === current.product.external_id) {
      for (const [field, value] of Object.entries(product.fields)) {
        if (current.product[field] !== value && !current.error) {
          current.error = `${field} differs between the rows of this product (line ${row.line}); product columns must repeat the first row's value or be empty`;
        }
      }
    } else {
      const done = finish();
      if (done) yield done;
      current = { line: row.line, product: product.fields, stores: [] };
    }
    current.error ??= product.error ?? store.error;
    if (Object.keys(store.fields).length > 0) current.stores.push(store.fields);
  }
  const done = finish();
  if (done) yield done;
}
