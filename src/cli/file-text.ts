// A file's bytes as text: read into one reused buffer, checked as UTF-8 chunk by chunk, decoded
// (UTF-8 or another `--encoding`) and split into lines. A file that cannot be read as text stops the
// whole run before anything is sent (`fileError`).
import { isUtf8 } from 'node:buffer';
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

