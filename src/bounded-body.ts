import { systemClock, type Clock } from './clock.ts';
import { ConfigurationError, IntegrationError } from './errors/integration-error.ts';

/** Deliveries are single orders: 1 MB is far above any real one, and far below what hurts a server. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Well under the service's 10 s answer limit, so a stalled sender never holds a receiver for long. */
export const DEFAULT_BODY_TIMEOUT_MS = 5000;

/** The longest delay a timer takes as given. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How much body a receiver accepts, and for how long it waits for it. */
export interface BodyLimits {
  /** @default 1 MB (1,048,576 bytes) */
  maxBodyBytes?: number | undefined;
  /** @default 5000 */
  bodyTimeoutMs?: number | undefined;
  /** Where the read deadline's timer comes from: tests inject one. @default the system clock */
  clock?: Clock | undefined;
}

/**
 * A body refused before it was read in full: larger than `maxBodyBytes` (`status` 413) or not
 * arrived within `bodyTimeoutMs` (`status` 408). What was read is dropped; the message holds
 * sizes and times only, never the bytes.
 */
export class BodyLimitError extends IntegrationError {
  static override readonly errorName: string = 'BodyLimitError';
  readonly status: 413 | 408;

  constructor(status: 413 | 408, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * The parts of a Node readable request (`node:http`'s `IncomingMessage`, Express's request) the
 * reader uses: events rather than async iteration, because leaving an iteration early destroys the
 * socket and with it the chance to answer 413.
 */
export interface NodeBodyStream {
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  pause(): unknown;
}

interface CheckedLimits {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  clock: Clock;
}

/** The limits with their defaults, refusing values that would switch a limit off by accident. */
export function checkBodyLimits(limits: BodyLimits = {}): CheckedLimits {
  const maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const bodyTimeoutMs = limits.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new ConfigurationError('maxBodyBytes must be a whole number of bytes >= 1.');
  }
  // Past 2^31 - 1 ms a timer fires at once (Node, browsers): every body would time out.
  if (typeof bodyTimeoutMs !== 'number' || !Number.isFinite(bodyTimeoutMs) || bodyTimeoutMs <= 0 || bodyTimeoutMs > MAX_TIMER_MS) {
    throw new ConfigurationError(`bodyTimeoutMs must be a number of milliseconds > 0 and at most ${MAX_TIMER_MS}.`);
  }
  return { maxBodyBytes, bodyTimeoutMs, clock: limits.clock ?? systemClock };
}

/**
 * Reads a Node request body into one buffer, refusing it (`BodyLimitError`) as soon as it passes
 * `maxBodyBytes` (a `Content-Length` above it is refused before reading a byte) or when it has not
 * ended within `bodyTimeoutMs`. On refusal the stream is paused, not drained: answer with
 * `Connection: close` so that the rest is never read.
 *
 * @example
 * ```ts
 * const body = await readNodeBody(req, { maxBodyBytes: 1024 * 1024 });
 * ```
 */
export function readNodeBody(stream: NodeBodyStream, limits: BodyLimits = {}): Promise<Uint8Array> {
  const { maxBodyBytes, bodyTimeoutMs, clock } = checkBodyLimits(limits);
  return new Promise((resolve, reject) => {
    const declared = declaredLength(stream.headers['content-length']);
    if (declared !== undefined && declared > maxBodyBytes) {
      stream.pause();
      reject(tooLarge(maxBodyBytes));
      return;
    }
    const chunks: Uint8Array[] = [];
    let received = 0;
    const stop = (outcome: () => void) => {
      cancelTimer();
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
      outcome();
    };
    const onData = (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      received += bytes.byteLength;
      if (received > maxBodyBytes) {
        stream.pause();
        stop(() => reject(tooLarge(maxBodyBytes)));
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => stop(() => resolve(concat(chunks, received)));
    const onError = (error: unknown) => stop(() => reject(error));
    // 'close' before 'end': the sender went away mid-body.
    const onClose = () => stop(() => reject(new BodyLimitError(408, 'The connection closed before the body ended.')));
    const cancelTimer = clock.setTimeout(() => {
      stream.pause();
      stop(() => reject(tooSlow(bodyTimeoutMs)));
    }, bodyTimeoutMs);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * Reads a Fetch `Request` body (or a bare byte stream) with the same limits as
 * {@link readNodeBody}; on refusal the stream is cancelled, so nothing more is pulled.
 *
 * @example
 * ```ts
 * const body = await readWebBody(request, { maxBodyBytes: 1024 * 1024 });
 * ```
 */
export async function readWebBody(
  source: Request | ReadableStream<Uint8Array> | null,
  limits: BodyLimits = {},
): Promise<Uint8Array> {
  const { maxBodyBytes, bodyTimeoutMs, clock } = checkBodyLimits(limits);
  const isRequest = source !== null && !(source instanceof ReadableStream);
  if (isRequest) {
    const declared = declaredLength(source.headers.get('content-length') ?? undefined);
    if (declared !== undefined && declared > maxBodyBytes) {
      void source.body?.cancel().catch(() => {});
      throw tooLarge(maxBodyBytes);
    }
  }
  const stream = isRequest ? source.body : source;
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  let cancelTimer = () => {};
  const deadline = new Promise<never>((_, reject) => {
    cancelTimer = clock.setTimeout(() => reject(tooSlow(bodyTimeoutMs)), bodyTimeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) return concat(chunks, received);
      received += value.byteLength;
      if (received > maxBodyBytes) throw tooLarge(maxBodyBytes);
      chunks.push(value);
    }
  } catch (error) {
    void reader.cancel().catch(() => {});
    throw error;
  } finally {
    cancelTimer();
  }
}

/**
 * Refuses (`BodyLimitError` 413) a body a framework already read (`express.raw`, `express.text`)
 * that is larger than `maxBodyBytes`: the limit holds whoever read the body.
 */
export function checkReadBody(body: string | Uint8Array, limits: BodyLimits = {}): void {
  const { maxBodyBytes } = checkBodyLimits(limits);
  // A string's UTF-8 length is at most 3 bytes per UTF-16 unit: count only when that could pass the cap.
  const bytes = typeof body === 'string' ? (body.length * 3 <= maxBodyBytes ? 0 : new TextEncoder().encode(body).byteLength) : body.byteLength;
  if (bytes > maxBodyBytes) throw tooLarge(maxBodyBytes);
}

function declaredLength(value: string | readonly string[] | undefined): number | undefined {
  return typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : undefined;
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function tooLarge(maxBodyBytes: number): BodyLimitError {
  return new BodyLimitError(413, `The body is larger than maxBodyBytes (${maxBodyBytes} bytes); it was not read further.`);
}

function tooSlow(bodyTimeoutMs: number): BodyLimitError {
  return new BodyLimitError(408, `The body did not arrive within bodyTimeoutMs (${bodyTimeoutMs} ms).`);
}
