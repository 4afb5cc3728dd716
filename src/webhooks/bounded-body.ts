/**
 * Reading a delivery's body within limits, for the Fetch handler, the Node listener and the inbox:
 * a body past `maxBytes` is not read (413), and one that does not arrive within `timeoutMs` is
 * given up (408). A huge or never-ending POST costs the receiver neither memory nor a hung answer.
 */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** Why a body was not read: answered 413 or 408. */
export class BodyLimitError extends Error {
  readonly status: 408 | 413;
  constructor(status: 408 | 413, message: string) {
    super(message);
    this.name = 'BodyLimitError';
    this.status = status;
  }
}

export function bodyLimitsOf(options: { maxBodyBytes?: number; bodyTimeoutMs?: number }): BodyLimits {
  return { maxBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, timeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS };
}

/** Checks the option values once, at construction; returns a message for what is wrong. */
export function bodyLimitsProblem(options: { maxBodyBytes?: unknown; bodyTimeoutMs?: unknown }): string | undefined {
  const { maxBodyBytes, bodyTimeoutMs } = options;
  if (maxBodyBytes !== undefined && !(Number.isSafeInteger(maxBodyBytes) && (maxBodyBytes as number) > 0)) return 'maxBodyBytes must be a whole number of bytes > 0';
  if (bodyTimeoutMs !== undefined && !(typeof bodyTimeoutMs === 'number' && bodyTimeoutMs > 0 && Number.isFinite(bodyTimeoutMs))) return 'bodyTimeoutMs must be a number of milliseconds > 0';
  return undefined;
}

function tooLarge(limits: BodyLimits): BodyLimitError {
  return new BodyLimitError(413, `the body is larger than ${limits.maxBytes} bytes`);
}

/** A declared `Content-Length` past the limit is refused before reading anything. */
export function checkDeclaredLength(contentLength: string | null | undefined, limits: BodyLimits): void {
  if (contentLength !== null && contentLength !== undefined && Number(contentLength) > limits.maxBytes) throw tooLarge(limits);
}

/**
 * Reads chunks (a Web `ReadableStream` reader or a Node request's async iterator) up to the
 * limits; `stop` releases the source when a limit is hit.
 */
export async function readBounded(chunks: AsyncIterator<unknown>, limits: BodyLimits, stop: () => void): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new BodyLimitError(408, `the body did not arrive within ${limits.timeoutMs} ms`)), limits.timeoutMs);
  });
  late.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([chunks.next(), late]);
      if (next.done) break;
      const part = typeof next.value === 'string' ? encoder.encode(next.value) : (next.value as Uint8Array);
      size += part.byteLength;
      if (size > limits.maxBytes) throw tooLarge(limits);
      parts.push(part);
    }
  } catch (error) {
    stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    body.set(part, offset);
    offset += part.byteLength;
  }
  return body;
}

/** A Fetch `Request`'s body within the limits. */
export async function readRequestBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  checkDeclaredLength(request.headers.get('content-length'), limits);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: AsyncIterator<unknown> = { next: () => reader.read() as Promise<IteratorResult<unknown>> };
  return readBounded(chunks, limits, () => void reader.cancel().catch(() => {}));
}

const encoder = new TextEncoder();
