// The `--errors` CSV: one row per rejected item, `line,external_id,store_id,code,message`, and
// never a payload beyond those fields. A resumed run appends to it.
import { createWriteStream, existsSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';

export const ERRORS_HEADER = 'line,external_id,store_id,code,message';

/**
 * One cell. The file is opened in spreadsheets, and its cells echo the input (ids, the service's
 * messages quoting values): a cell starting with `=`, `+`, `-`, `@`, a tab or a CR would run as a
 * formula, so it gets a leading `'` and quotes, as OWASP's CSV-injection advice has it.
 */
function csvCell(value: string | number): string {
  const text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One rejected item, as the errors file records it. */
export interface Rejection {
  line: number;
  external_id: string;
  store_id: string;
  code: string;
  message: string;
}

export class ErrorsFile {
  readonly path: string;
  #stream: WriteStream | undefined;
  readonly #append: boolean;
  count = 0;

  constructor(path: string, append: boolean) {
    this.path = path;
    this.#append = append && existsSync(path) && statSync(path).size > 0;
    // A fresh run must not leave a previous run's rejections looking like its own.
    if (!this.#append) rmSync(path, { force: true });
  }

  /** Opened on first rejection, so a clean run leaves no errors file behind. */
  open(): void {
    if (this.#stream) return;
    this.#stream = createWriteStream(this.path, { flags: this.#append ? 'a' : 'w' });
    if (!this.#append) this.#stream.write(`${ERRORS_HEADER}\n`);
  }

  write(rejection: Rejection): void {
    this.open();
    this.count++;
    const { line, external_id, store_id, code, message } = rejection;
    this.#stream?.write(`${[line, external_id, store_id, code, message].map(csvCell).join(',')}\n`);
  }

  async close(): Promise<void> {
    const stream = this.#stream;
    if (!stream) return;
    stream.end();
    await once(stream, 'finish');
  }
}
