// Streams a catalog or stock file (CSV, JSON Lines, JSON array) as wire-shaped items, each with
// the physical line it starts on. Memory holds one record at a time plus the ids the duplicate rule
// must remember. A file that cannot be read as its format (syntax, unknown column, a number that is
// not a plain decimal) throws UsageError naming the line: the whole run stops before sending.
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse as parseCsv } from 'csv-parse';
import Assembler from 'stream-json/assembler.js';
import jsoncParser from 'stream-json/jsonc/parser.js';
import { productRules, stockRules } from '../resources/bulk/item-checks.ts';
import { UsageError } from './config.ts';
import { readDecimal } from './decimal.ts';

export type PushKind = 'catalog' | 'stock';
export type InputFormat = 'csv' | 'jsonl' | 'json';

/** A local rejection: written to the errors file, never sent. */
export interface LocalError {
  code: 'VALIDATION_ERROR';
  message: string;
}

/** One item of the file: `item` to send, or `error` when it is rejected locally. */
export interface InputRecord {
  line: number;
  external_id: string;
  store_id: string;
  item?: Record<string, unknown>;
  error?: LocalError;
}

const PRODUCT_COLUMNS = ['external_id', 'name', 'price', 'gtin', 'category'] as const;
const STORE_COLUMNS = ['store_id', 'stock_quantity', 'price_override', 'active'] as const;
const STOCK_COLUMNS = ['external_id', 'store_id', 'stock_quantity', 'price_override', 'active'] as const;
const NUMERIC = new Set(['price', 'stock_quantity', 'price_override']);

/** Picks the format from `--format` or the file's extension. */
export function formatOf(file: string, explicit: string | undefined): InputFormat {
  const format = explicit ?? (/\.csv$/i.test(file) ? 'csv' : /\.(jsonl|ndjson)$/i.test(file) ? 'jsonl' : /\.json$/i.test(file) ? 'json' : undefined);
  if (format === 'csv' || format === 'jsonl' || format === 'json') return format;
  if (explicit !== undefined) throw new UsageError(`--format must be csv, jsonl or json, got "${explicit}".`);
  throw new UsageError(`Cannot tell the format of ${file} from its extension: pass --format csv|jsonl|json.`);
}

/**
 * The file's bytes, read into one buffer again and again: a chunk is valid until the next one is
 * asked for. A read stream's fresh chunk per read is freed only when the garbage collector gets to
 * it, and over a long run the allocator kept that backlog resident (a 1 GB file peaked 60% above a
 * 10 MB one). CSV stays on a read stream: csv-parse keeps references into its chunks.
 */
export async function* readChunks(file: string, size: number): AsyncGenerator<Buffer> {
  const handle = await open(file);
  try {
    const buffer = Buffer.allocUnsafe(size);
    for (let read = await handle.read(buffer, 0, size); read.bytesRead > 0; read = await handle.read(buffer, 0, size)) {
      yield buffer.subarray(0, read.bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * The encoding of `--encoding` by its WHATWG label (`latin1`, `windows-1252`, `utf-8`…), as
 * `TextDecoder` names it; `utf-8` when none was given. `UsageError` for a label it does not know.
 */
export function encodingOf(label: string | undefined): string {
  if (label === undefined) return 'utf-8';
  try {
    return new TextDecoder(label).encoding;
  } catch {
    throw new UsageError(`--encoding "${label}" is not an encoding this Node.js knows: use utf-8, latin1 or windows-1252 (any WHATWG encoding label).`);
  }
}

/**
 * Checks that a file is UTF-8, chunk by chunk, as the first pass reads it: a byte that is not (a
 * Latin-1 "ã" in an export saved as ANSI) would otherwise be read as U+FFFD and sent. `check`
 * throws UsageError naming the physical line of the first invalid byte.
 */
export class Utf8Check {
  /** Bytes of a character split between two chunks, kept for the next one. */
  #carry: Buffer = Buffer.alloc(0);

  /** `linesBefore`: line breaks in the chunks before this one. */
  check(chunk: Buffer, linesBefore: number): void {
    let start = 0;
    if (this.#carry.length > 0) {
      const need = sequenceLength(this.#carry[0]!) - this.#carry.length;
      const whole = Buffer.concat([this.#carry, chunk.subarray(0, need)]);
      if (whole.length < this.#carry.length + need) { // the chunk is shorter than the character: keep collecting
        this.#carry = whole;
        return;
      }
      if (!isUtf8(whole)) invalid(linesBefore + 1);
      start = need;
    }
    const end = chunk.length - incompleteTail(chunk, start);
    this.#carry = Buffer.from(chunk.subarray(end));
    const body = chunk.subarray(start, end);
    if (isUtf8(body)) return;
    // Rare: find the line. A line break byte is never inside a multi-byte character.
    let line = linesBefore + 1;
    for (let from = 0; ; line++) {
      const at = body.indexOf(10, from);
      if (!isUtf8(body.subarray(from, at === -1 ? body.length : at))) invalid(line);
      if (at === -1) return;
      from = at + 1;
    }
  }

  /** At the end of the file: a character cut off by it is invalid too. */
  end(lines: number): void {
    if (this.#carry.length > 0) invalid(lines + 1);
  }
}

/** Bytes of the UTF-8 sequence a lead byte starts (1 for a byte that cannot start one: isUtf8 then says no). */
function sequenceLength(lead: number): number {
  return lead >= 0xf0 && lead <= 0xf7 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
}

/** How many bytes at the end of `chunk` start a character the chunk does not finish. */
function incompleteTail(chunk: Buffer, start: number): number {
  for (let back = 1; back <= 3 && chunk.length - back >= start; back++) {
    const byte = chunk[chunk.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    return byte >= 0xc0 && sequenceLength(byte) > back ? back : 0;
  }
  return 0;
}

function invalid(line: number): never {
  throw new UsageError(`Line ${line}: the file is not valid UTF-8 (saved in another encoding, such as Latin-1 or Windows-1252?); save it as UTF-8, or name its encoding with --encoding latin1 (nothing was sent).`);
}

/**
 * The file as text. Chunks stay under 128 KB, V8's large-object size: a larger string goes straight
 * to the old generation, and every line sliced from it keeps it there. UTF-8 was checked in the
 * first pass; another `--encoding` is decoded by `TextDecoder`.
 */
async function* readText(file: string, encoding: string): AsyncGenerator<string> {
  const decoder = encoding === 'utf-8' ? new StringDecoder('utf8') : new TextDecoder(encoding);
  const write = decoder instanceof StringDecoder ? (chunk: Buffer) => decoder.write(chunk) : (chunk: Buffer) => decoder.decode(chunk, { stream: true });
  for await (const chunk of readChunks(file, 64 * 1024)) yield write(chunk);
  const rest = decoder instanceof StringDecoder ? decoder.end() : decoder.decode();
  if (rest !== '') yield rest;
}

/**
 * Lines split on `\n` only (a `\r` before it dropped), a chunk's worth at a time: U+2028 and U+2029
 * may stand raw inside a JSON string, and readline would split there.
 */
async function* textLines(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  let rest = '';
  for await (const chunk of chunks) {
    const text = rest === '' ? chunk : rest + chunk;
    const lines: string[] = [];
    let from = 0;
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', from)) {
      lines.push(text.charCodeAt(at - 1) === 13 ? text.slice(from, at - 1) : text.slice(from, at));
      from = at + 1;
    }
    rest = text.slice(from);
    if (lines.length > 0) yield lines;
  }
  if (rest !== '') yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}

function fail(line: number, message: string): never {
  throw new UsageError(`Line ${line}: ${message}; fix the file and run again (nothing was sent).`);
}

function cellValue(column: string, raw: string, line: number): unknown {
  if (NUMERIC.has(column)) {
    if (column === 'price_override' && raw.trim() === 'null') return null;
    const value = readDecimal(raw, column);
    return typeof value === 'number' ? value : fail(line, value.error);
  }
  if (column === 'active') {
    if (raw === 'true' || raw === 'false') return raw === 'true';
    return fail(line, `active must be true or false, got "${raw}"`);
  }
  return raw;
}

/** One CSV row's fields by wire name; an empty cell means the field is absent. */
function rowFields(row: Record<string, string>, columns: readonly string[], line: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const column of columns) {
    const raw = row[column];
    if (raw !== undefined && raw !== '') fields[column] = cellValue(column, raw, line);
  }
  return fields;
}

interface Row {
  line: number;
  fields: Record<string, string>;
}

/**
 * Line breaks in a record's raw text. csv-parse keeps only the first character of each record
 * delimiter there (`\r` of a CRLF file's `\r\n`) but whole line breaks inside quoted fields.
 */
function lineBreaks(raw: string): number {
  return raw.match(/\r\n|\r|\n/g)?.length ?? 0;
}

/**
 * Rows with the physical line each starts on. csv-parse's `info.lines` is not the start line (it
 * counts blank lines and bare CRs its own way), so lines are counted on each record's raw text,
 * which begins with the blank lines skipped before it.
 */
async function* csvRows(file: string, kind: PushKind, encoding: string): AsyncGenerator<Row> {
  const allowed = new Set<string>(kind === 'catalog' ? [...PRODUCT_COLUMNS, ...STORE_COLUMNS] : STOCK_COLUMNS);
  const source = encoding === 'utf-8' ? createReadStream(file) : Readable.from(readText(file, encoding));
  const parser = source.pipe(parseCsv({ bom: true, columns: true, raw: true, skip_empty_lines: true }));
  let checked = false;
  let linesBefore = 1; // the header
  try {
    for await (const { record, raw } of parser as AsyncIterable<{ record: Record<string, string>; raw: string }>) {
      if (!checked) {
        const unknown = Object.keys(record).filter((c) => !allowed.has(c));
        if (unknown.length > 0) fail(1, `unknown column ${unknown.map((c) => `"${c}"`).join(', ')}; allowed: ${[...allowed].join(',')}`);
        if (!('external_id' in record)) fail(1, 'the header has no external_id column');
        if (kind === 'stock' && !('store_id' in record)) fail(1, 'the header has no store_id column');
        checked = true;
      }
      yield { line: linesBefore + lineBreaks(/^[\r\n]*/.exec(raw)![0]) + 1, fields: record };
      linesBefore += lineBreaks(raw);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // The record after the last one read starts the line after it: csv-parse's own count (also in
    // its message) takes a CRLF inside quotes for two lines.
    const message = (error as Error).message.split('\n')[0]!.replace(/ on line \d+/, '');
    throw new UsageError(`Line ${linesBefore + 1}: the CSV cannot be read (${message}); fix the file and run again (nothing was sent).`);
  }
}

async function* csvItems(file: string, kind: PushKind, encoding: string): AsyncGenerator<Omit<InputRecord, 'store_id'> & { store_id?: string }> {
  if (kind === 'stock') {
    for await (const row of csvRows(file, kind, encoding)) {
      const item = rowFields(row.fields, STOCK_COLUMNS, row.line);
      yield { line: row.line, external_id: String(item.external_id ?? ''), store_id: String(item.store_id ?? ''), item };
    }
    return;
  }
  // Catalog: consecutive rows with the same external_id are one product with several stores[].
  let current: { line: number; product: Record<string, unknown>; stores: Record<string, unknown>[]; error?: string } | undefined;
  const finish = () => {
    if (!current) return undefined;
    const { line, product, stores, error } = current;
    const external_id = String(product.external_id ?? '');
    if (error) return { line, external_id, error: { code: 'VALIDATION_ERROR' as const, message: error } };
    return { line, external_id, item: stores.length > 0 ? { ...product, stores } : product };
  };
  for await (const row of csvRows(file, kind, encoding)) {
    const product = rowFields(row.fields, PRODUCT_COLUMNS, row.line);
    const store = rowFields(row.fields, STORE_COLUMNS, row.line);
    if (current && product.external_id !== undefined && product.external_id === current.product.external_id) {
      for (const [field, value] of Object.entries(product)) {
        if (current.product[field] !== value && !current.error) {
          current.error = `${field} differs between the rows of this product (line ${row.line}); product columns must repeat the first row's value or be empty`;
        }
      }
    } else {
      const done = finish();
      if (done) yield done;
      current = { line: row.line, product, stores: [] };
    }
    if (Object.keys(store).length > 0) current.stores.push(store);
  }
  const done = finish();
  if (done) yield done;
}

/** Checks numbers against their source text while parsing: `JSON.parse`'s reviver sees the source. */
function exactReviver(line: number) {
  return function (this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
    if (typeof value === 'number' && context?.source !== undefined) {
      const checked = readDecimal(context.source, key || 'value');
      if (typeof checked !== 'number') fail(line, checked.error);
    }
    return value;
  };
}

async function* jsonlItems(file: string, encoding: string): AsyncGenerator<{ line: number; value: unknown }> {
  let line = 0;
  for await (const lines of textLines(readText(file, encoding))) {
    for (let text of lines) {
      line++;
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text, exactReviver(line) as (key: string, value: unknown) => unknown);
      } catch (error) {
        if (error instanceof UsageError) throw error;
        fail(line, `not valid JSON (${(error as Error).message})`);
      }
      yield { line, value };
    }
  }
}

/**
 * A JSON array, element by element, with the physical line each element starts on. stream-json's
 * JSONC tokenizer reports the whitespace between tokens (a JSON string cannot hold a raw line
 * break), so counting its line breaks gives the line; each number is checked on its source text.
 */
async function* jsonArrayItems(file: string, encoding: string): AsyncGenerator<{ line: number; value: unknown }> {
  const tokens = Readable.from(readText(file, encoding)).pipe(jsoncParser.asStream({ packValues: true, streamValues: false, streamComments: false }));
  let line = 1;
  let opened = false;
  let element: { line: number; assembler: Assembler; key: string } | undefined;
  try {
    for await (const token of tokens as AsyncIterable<{ name: string; value?: unknown }>) {
      if (token.name === 'whitespace' || token.name === 'commentValue') {
        line += String(token.value).split('\n').length - 1;
        continue;
      }
      if (!opened) {
        if (token.name !== 'startArray') fail(line, 'the file must be a JSON array of items, starting with [');
        opened = true;
        continue;
      }
      if (element === undefined) {
        if (token.name === 'endArray') continue; // the end of the array; the parser refuses anything after it
        element = { line, assembler: new Assembler(), key: '' };
      }
      if (token.name === 'keyValue') element.key = String(token.value);
      if (token.name === 'numberValue') {
        const checked = readDecimal(String(token.value), element.key || 'value');
        if (typeof checked !== 'number') fail(line, checked.error);
      }
      element.assembler.consume(token as never);
      if (element.assembler.done) {
        yield { line: element.line, value: element.assembler.current };
        element = undefined;
      }
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`The file is not a JSON array of items (${(error as Error).message}); fix it and run again (nothing was sent).`);
  }
  if (!opened) fail(line, 'the file must be a JSON array of items, starting with [');
}

/** The key the duplicate rule compares: `external_id` (catalog), `external_id` + `store_id` (stock). */
export function repeatKey(kind: PushKind, record: { external_id: string; store_id?: string }): string {
  // A UUID names the same store in any letter case, as the SDK's own duplicate rule has it.
  return kind === 'catalog' ? record.external_id : `${record.external_id}\u0000${(record.store_id ?? '').toLowerCase()}`;
}

/**
 * Every item of the file in order, as parsed: the pass that counts and screens the file reads only
 * this. Throws `UsageError` on the first record the format cannot read.
 */
export async function* readItems(file: string, kind: PushKind, format: InputFormat, encoding = 'utf-8'): AsyncGenerator<InputRecord> {
  if (format === 'csv') {
    for await (const record of csvItems(file, kind, encoding)) yield { ...record, store_id: kind === 'stock' ? (record.store_id ?? '') : '' };
    return;
  }
  for await (const { line, value } of format === 'jsonl' ? jsonlItems(file, encoding) : jsonArrayItems(file, encoding)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(line, 'each item must be a JSON object');
    const item = value as Record<string, unknown>;
    yield { line, external_id: String(item.external_id ?? ''), store_id: kind === 'stock' ? String(item.store_id ?? '') : '', item };
  }
}

/**
 * Every item of the file in order, with the duplicate rule applied across the whole file: a repeat
 * of an `external_id` (catalog) or `external_id` + `store_id` (stock) is rejected, naming the first
 * line (`firstLine` is the rule: see repeats.ts); then the SDK's item checks, so an item the SDK
 * would reject is rejected here, never sent.
 */
export async function* readRecords(file: string, kind: PushKind, format: InputFormat, firstLine: (key: string, line: number) => number | undefined, encoding = 'utf-8'): AsyncGenerator<InputRecord> {
  const rules = kind === 'catalog' ? productRules : stockRules;
  for await (const record of readItems(file, kind, format, encoding)) {
    const first = record.external_id === '' ? undefined : firstLine(repeatKey(kind, record), record.line);
    if (first !== undefined) {
      const what = kind === 'catalog' ? 'external_id' : 'external_id and store_id';
      yield { line: record.line, external_id: record.external_id, store_id: record.store_id, error: { code: 'VALIDATION_ERROR', message: `${what} repeated in the file (first at line ${first}); only the first is sent` } };
      continue;
    }
    // The SDK's own pre-checks (a fourth decimal in stock_quantity, a store_id that is not a UUID…),
    // so that --dry-run rejects what the real push would, with the same message.
    const problem = record.item === undefined ? undefined : rules.problem(record.item);
    yield problem === undefined ? record : { line: record.line, external_id: record.external_id, store_id: record.store_id, error: { code: 'VALIDATION_ERROR', message: problem } };
  }
}
