// A file's bytes as text: read into one reused buffer, checked as UTF-8 chunk by chunk, decoded
// (UTF-8 or another `--encoding`) and split into lines. A file that cannot be read as text stops the
// whole run before anything is sent (`fileError`).
import { isAscii, isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { UsageError } from './config.ts';

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
 * What a file's bytes say about UTF-8, fed chunk by chunk as a pass reads it: the line of the first
 * byte that is not UTF-8 (a Latin-1 "ã" in an export saved as ANSI, which a UTF-8 reading would turn
 * into U+FFFD and send), and whether a valid multi-byte UTF-8 character was seen too (a file mixing
 * two encodings, which no single encoding reads right). Valid chunks are judged by `isUtf8`; only a
 * chunk that is not is walked byte by byte.
 */
export class Utf8Scan {
  /** Bytes of a character split between two chunks, kept for the next one. */
  #carry: Buffer = Buffer.alloc(0);
  #lines = 0;
  /** The physical line of the first byte that is not UTF-8; `undefined` while the file is UTF-8. */
  firstInvalidLine: number | undefined;
  /** A valid multi-byte UTF-8 character was seen (a BOM included). */
  multibyte = false;

  /** Whether reading on can change nothing: not UTF-8, and UTF-8 characters seen too. */
  get settled(): boolean {
    return this.firstInvalidLine !== undefined && this.multibyte;
  }

  feed(chunk: Buffer): void {
    let start = 0;
    if (this.#carry.length > 0) {
      const need = sequenceLength(this.#carry[0]!) - this.#carry.length;
      const whole = Buffer.concat([this.#carry, chunk.subarray(0, need)]);
      if (whole.length < this.#carry.length + need) { // the chunk is shorter than the character: keep collecting
        this.#carry = whole;
        return;
      }
      if (isUtf8(whole)) this.multibyte = true;
      else this.#invalid();
      start = need;
    }
    const end = chunk.length - incompleteTail(chunk, start);
    this.#carry = Buffer.from(chunk.subarray(end));
    const body = chunk.subarray(start, end);
    if (!isUtf8(body)) return this.#walk(body);
    if (!this.multibyte && !isAscii(body)) this.multibyte = true;
    for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) this.#lines++;
  }

  /** At the end of the file: a character cut off by it is not UTF-8 either. */
  end(): void {
    if (this.#carry.length > 0) this.#invalid();
    this.#carry = Buffer.alloc(0);
  }

  /** A chunk that is not UTF-8: which of its characters are, and the line of the first byte that is not. */
  #walk(body: Buffer): void {
    for (let at = 0; at < body.length; ) {
      const byte = body[at]!;
      if (byte < 0x80) {
        if (byte === 10) this.#lines++;
        at++;
        continue;
      }
      const length = sequenceLength(byte);
      if (length > 1 && at + length <= body.length && isUtf8(body.subarray(at, at + length))) {
        this.multibyte = true;
        at += length;
      } else {
        this.#invalid();
        at++;
      }
    }
  }

  #invalid(): void {
    this.firstInvalidLine ??= this.#lines + 1;
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

/**
 * The file as text. Chunks stay under 128 KB, V8's large-object size: a larger string goes straight
 * to the old generation, and every line sliced from it keeps it there. UTF-8 was checked in the
 * first pass; another `--encoding` is decoded by `TextDecoder`.
 */
export async function* readText(file: string, encoding: string): AsyncGenerator<string> {
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
export async function* textLines(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
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

/** A file the run cannot read: `Line N: …`, exit 2, before anything is sent. */
export function fileError(line: number, message: string): never {
  throw new UsageError(`Line ${line}: ${message}; fix the file and run again (nothing was sent).`);
}

