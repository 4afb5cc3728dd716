// Streams a catalog or stock file (CSV, JSON Lines, JSON array) as wire-shaped items, each with
// the physical line it starts on. Memory holds one record at a time plus the ids the duplicate rule
// must remember. A file that cannot be read as its format (syntax, unknown column, a number that is
// not a plain decimal) throws UsageError naming the line: the whole run stops before sending.
// CSV is read in csv-input.ts, the bytes as text in file-text.ts.
import { Readable } from 'node:stream';
import Assembler from 'stream-json/assembler.js';
import jsoncParser from 'stream-json/jsonc/parser.js';
import { productRules, stockRules } from '../resources/bulk/item-checks.ts';
import { UsageError } from './config.ts';
import { csvItems } from './csv-input.ts';
import { readDecimal } from './decimal.ts';
import { fileError, readChunks, readText, textLines, Utf8Scan } from './file-text.ts';

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

/** How to read the file: its text encoding (as `TextDecoder` names it, default UTF-8) and, for CSV, `--delimiter`. */
export interface ReadOptions {
  encoding?: string;
  /** `,` `;` or `tab`; detected from the CSV's header line when not given. */
  delimiter?: string;
}

/** Picks the format from `--format` or the file's extension. */
export function formatOf(file: string, explicit: string | undefined): InputFormat {
  const format = explicit ?? (/\.csv$/i.test(file) ? 'csv' : /\.(jsonl|ndjson)$/i.test(file) ? 'jsonl' : /\.json$/i.test(file) ? 'json' : undefined);
  if (format === 'csv' || format === 'jsonl' || format === 'json') return format;
  if (explicit !== undefined) throw new UsageError(`--format must be csv, jsonl or json, got "${explicit}".`);
  throw new UsageError(`Cannot tell the format of ${file} from its extension: pass --format csv|jsonl|json.`);
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
 * The encoding to read `file` in, after one pass over its bytes. `--encoding` naming another
 * encoding than UTF-8 is taken as it is. Otherwise a file that is UTF-8 is read as UTF-8, and one
 * that is not is refused, naming the line (a UTF-8 reading would send U+FFFD for each such byte),
 * except a CSV given without `--encoding` that holds no UTF-8 character at all: that is what Excel
 * saves as "CSV (separado por vírgulas)" (windows-1252, the ANSI code page of Brazil and Western
 * Europe), and it is read as windows-1252, saying so in one line through `say`. A CSV that mixes
 * UTF-8 characters and other bytes is refused: no one encoding reads it right.
 */
export async function fileEncoding(file: string, format: InputFormat, label: string | undefined, say: (line: string) => void): Promise<string> {
  const named = label === undefined ? undefined : encodingOf(label);
  if (named !== undefined && named !== 'utf-8') return named;
  const mayFallBack = named === undefined && format === 'csv';
  const scan = new Utf8Scan();
  try {
    for await (const chunk of readChunks(file, 1024 * 1024)) {
      scan.feed(chunk);
      if (scan.settled || (!mayFallBack && scan.firstInvalidLine !== undefined)) break;
    }
  } catch {
    throw new UsageError(`Cannot read ${file}: check the path and its permissions.`);
  }
  if (!scan.settled) scan.end();
  const line = scan.firstInvalidLine;
  if (line === undefined) return 'utf-8';
  if (mayFallBack && !scan.multibyte) {
    say(`${file} is not UTF-8 (line ${line} is the first that is not): reading it as windows-1252, what Excel saves as "CSV (separado por vírgulas)"; if it was saved in another encoding, name it with --encoding (such as latin1, iso-8859-15 or ibm850).`);
    return WINDOWS_1252;
  }
  const mixed = scan.multibyte && format === 'csv' && named === undefined ? ', and elsewhere it holds UTF-8 characters: it mixes two encodings, so it is not read as windows-1252 either' : ' (saved in another encoding, such as Latin-1 or Windows-1252?)';
  throw new UsageError(`Line ${line}: the file is not valid UTF-8${mixed}; save it as UTF-8, or name its encoding with --encoding latin1 (nothing was sent).`);
}

/** What Excel in Brazil (and Western Europe) saves a "CSV (separado por vírgulas)" in. */
const WINDOWS_1252 = 'windows-1252';

/** Checks numbers against their source text while parsing: `JSON.parse`'s reviver sees the source. */
function exactReviver(line: number) {
  return function (this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
    if (typeof value === 'number' && context?.source !== undefined) {
      const checked = readDecimal(context.source, key || 'value');
      if (typeof checked !== 'number') fileError(line, checked.error);
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
        fileError(line, `not valid JSON (${(error as Error).message})`);
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
        if (token.name !== 'startArray') fileError(line, 'the file must be a JSON array of items, starting with [');
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
        if (typeof checked !== 'number') fileError(line, checked.error);
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
  if (!opened) fileError(line, 'the file must be a JSON array of items, starting with [');
}

/** The key the duplicate rule compares: `external_id` (catalog), `external_id` + `store_id` (stock). */
export function repeatKey(kind: PushKind, record: { external_id: string; store_id?: string }): string {
  // A UUID names the same store in any letter case, as the SDK's own duplicate rule has it.
  return kind === 'catalog' ? record.external_id : `${record.external_id}\u0000${(record.store_id ?? '').toLowerCase()}`;
}

/** The duplicate rule's message for a repeat whose key first occurs at line `first`. */
export function repeatMessage(kind: PushKind, first: number): string {
  const what = kind === 'catalog' ? 'external_id' : 'external_id and store_id';
  return `${what} repeated in the file (first at line ${first}); only the first is sent`;
}

/**
 * Every item of the file in order, as parsed: the pass that counts and screens the file reads only
 * this. Throws `UsageError` on the first record the format cannot read.
 */
export async function* readItems(file: string, kind: PushKind, format: InputFormat, options: ReadOptions = {}): AsyncGenerator<InputRecord> {
  const encoding = options.encoding ?? 'utf-8';
  if (format === 'csv') {
    for await (const { error, ...record } of csvItems(file, kind, { encoding, delimiter: options.delimiter })) {
      yield { ...record, store_id: kind === 'stock' ? (record.store_id ?? '') : '', ...(error === undefined ? {} : { error: { code: 'VALIDATION_ERROR', message: error } }) };
    }
    return;
  }
  for await (const { line, value } of format === 'jsonl' ? jsonlItems(file, encoding) : jsonArrayItems(file, encoding)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) fileError(line, 'each item must be a JSON object');
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
export async function* readRecords(file: string, kind: PushKind, format: InputFormat, firstLine: (key: string, line: number) => number | undefined, options: ReadOptions = {}): AsyncGenerator<InputRecord> {
  const rules = kind === 'catalog' ? productRules : stockRules;
  for await (const record of readItems(file, kind, format, options)) {
    const first = record.external_id === '' ? undefined : firstLine(repeatKey(kind, record), record.line);
    if (first !== undefined) {
      yield { line: record.line, external_id: record.external_id, store_id: record.store_id, error: { code: 'VALIDATION_ERROR', message: repeatMessage(kind, first) } };
      continue;
    }
    // The SDK's own pre-checks (a fourth decimal in stock_quantity, a store_id that is not a UUID…),
    // so that --dry-run rejects what the real push would, with the same message.
    const problem = record.item === undefined ? undefined : rules.problem(record.item);
    yield problem === undefined ? record : { line: record.line, external_id: record.external_id, store_id: record.store_id, error: { code: 'VALIDATION_ERROR', message: problem } };
  }
}
