import ky, { type KyInstance } from 'ky';
import pRetry, { AbortError } from 'p-retry';
import {
  ConnectionError,
  IntegrationError,
  InvalidInputError,
  RateLimitError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/index.ts';
import { VERSION } from '../version.ts';
import { resolveCallOptions, type ResolvedCallOptions } from './call-options.ts';
import { raceAbort, sleep, type Clock } from '../clock.ts';
import { errorFromAnswer, type Answer } from './error-from-answer.ts';
import type { Logger } from './logger.ts';
import type { AttemptFinished, RateLimiter } from './rate-limiter.ts';
import { validateResponse } from './response-issues.ts';
import { parseRetryAfter } from './retry-after.ts';
import { backoffDelay, isRetryable } from './retry-policy.ts';
import { sanitizeCause } from './sanitize-cause.ts';
import type { RequestSpec, Requester } from './types.ts';

export const API_PREFIX = '/integration/v1';

/** Largest answer read, in bytes: a bulk answer of 500 results is well under 1 MB. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** A 429 without `Retry-After` (the service always sends one): the service's own minimum. */
const DEFAULT_RATE_LIMIT_PAUSE_MS = 1_000;

/** Everything the transport needs, validated by the client's constructor. */
export interface TransportSettings {
  apiKey: string;
  /** Absolute, ending with `/integration/v1`, no trailing slash. */
  baseUrl: string;
  timeoutMs: number;
  totalTimeoutMs: number;
  maxRetries: number;
  maxRetryAfterMs: number;
  limiter: RateLimiter;
  fetch: typeof globalThis.fetch | undefined;
  logger: Partial<Logger> | undefined;
  clock: Clock;
  random: () => number;
}

/**
 * The request pipeline, read top to bottom in `send`: build the URL, take a rate-limit token,
 * make one attempt under its deadline, map the answer, validate it, and retry what the retry
 * policy allows. The key lives in a private field: nothing that logs, inspects or serialises the
 * client can reach it.
 */
export class HttpRequester implements Requester {
  readonly #settings: TransportSettings;
  /** The one HTTP client: prefix, headers and key; retries, deadlines and errors stay ours (below). */
  readonly #http: KyInstance;
  /** The base URL's path (`/integration/v1`, or under a proxy's prefix): ky prepends it. */
  readonly #prefixPath: string;
  /** Until when a 429 paused every call of this client (the limiter holds them back). */
  #pausedUntil = 0;

  constructor(settings: TransportSettings) {
    this.#settings = settings;
    this.#prefixPath = new URL(settings.baseUrl).pathname.replace(/\/+$/, '');
    const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
    this.#http = ky.create({
      prefix: settings.baseUrl,
      headers: { 'X-API-Key': settings.apiKey, Accept: 'application/json', 'User-Agent': `integration-sdk/${VERSION}${node ? ` node/${node}` : ''}` },
      // p-retry owns retries (with the key-wide 429 pause and the retry modes); the per-attempt
      // deadline below covers the body read, which ky's `timeout` does not.
      retry: 0,
      timeout: false,
      // Non-2xx answers are mapped from the service's error envelope by errorFromAnswer.
      throwHttpErrors: false,
      // A redirect followed by fetch keeps the X-API-Key header, even to another host: a 3xx is
      // returned as it is and becomes ApiError `HTTP_3xx`.
      redirect: 'manual',
      // The configured fetch, else `globalThis.fetch` looked up now, so that msw or a spy installed
      // after the client was built still takes effect.
      fetch: (input, init) => (settings.fetch ?? globalThis.fetch)(input, init),
    });
  }

  async send<T>(spec: RequestSpec<T>): Promise<T> {
    const call = resolveCallOptions(spec.options, this.#settings);
    const url = this.#buildUrl(spec);
    // Errors and logs name the path without its query: queries can carry a customer's phone.
    const request = { method: spec.method, path: url.pathname };
    const budget = new Budget(call.totalTimeoutMs);
    // Once, before the first attempt: every retry sends the same text, and a body JSON cannot carry
    // (a BigInt, a cycle) is the caller's mistake, not a connection failure worth retrying.
    const body = serializeBody(spec.body);
    // A call that cannot outlive the pause a 429 set fails now, not when its deadline is long past.
    const pauseLeft = this.#pausedUntil - this.#settings.clock.now();
    if (pauseLeft > 0 && pauseLeft >= call.totalTimeoutMs) {
      throw new RateLimitError({
        status: 429,
        code: 'RATE_LIMITED',
        message: `every call of this client is paused by a 429 for another ${Math.ceil(pauseLeft)} ms, past this call's totalTimeoutMs (${call.totalTimeoutMs} ms); nothing was sent`,
        requestMethod: request.method,
        requestPath: request.path,
        headers: {},
        retryAfterMs: Math.ceil(pauseLeft),
      });
    }

    return pRetry(
      async (attemptNumber) => {
        // Time queued behind our own limiter is not the service's fault: it is not in the budget.
        const attemptFinished = await this.#settings.limiter.acquire(call.signal);
        try {
          return await this.#attempt(spec, url, body, request, attemptNumber, call, budget, attemptFinished);
        } catch (error) {
          if (!(error instanceof IntegrationError)) throw new AbortError(asError(error));
          if (attemptNumber > 1 && spec.alreadyDoneOnRetry?.(error)) return undefined as T;
          if (error instanceof RateLimitError) {
            if (this.#retryAfterTooLong(error)) throw new AbortError(error);
            this.#pauseEveryCall(error, request.path);
          }
          if (!isRetryable(error, spec.retry)) throw new AbortError(error);
          throw error;
        }
      },
      {
        retries: call.maxRetries,
        // p-retry has no per-attempt delay: the wait happens in `shouldRetry`, where the budget
        // and the signal are checked, and p-retry's own delay is kept at 0.
        minTimeout: 0,
        maxTimeout: 0,
        signal: call.signal,
        shouldRetry: async ({ error, retriesConsumed }) => {
          const waitMs = error instanceof RateLimitError ? rateLimitWait(error) : backoffDelay(retriesConsumed, this.#settings.random);
          // No wait is started that would end past the call's deadline: the last error is thrown.
          if (!budget.allows(waitMs)) return false;
          await sleep(this.#settings.clock, waitMs, call.signal);
          budget.spend(waitMs);
          return true;
        },
      },
    );
  }

  /** One attempt: its own deadline covers the whole exchange, reading the body included. */
  async #attempt<T>(
    spec: RequestSpec<T>,
    url: URL,
    body: string | undefined,
    request: { method: string; path: string },
    attemptNumber: number,
    call: ResolvedCallOptions,
    budget: Budget,
    attemptFinished: AttemptFinished | void,
  ): Promise<T> {
    const { clock } = this.#settings;
    const attemptTimeoutMs = Math.min(call.timeoutMs, budget.remaining());
    // One controller per attempt aborts the exchange on the deadline or on the caller's signal. The
    // caller's signal is forwarded with a listener rather than `AbortSignal.any`, which costs more
    // per call; which of the two fired is read from the caller's signal below.
    const deadline = new AbortController();
    const cancelDeadline = clock.setTimeout(() => deadline.abort(new DOMException(`no complete answer within ${attemptTimeoutMs} ms`, 'TimeoutError')), attemptTimeoutMs);
    const userSignal = call.signal;
    const onUserAbort = userSignal === undefined ? undefined : () => deadline.abort(userSignal.reason);
    if (userSignal !== undefined) {
      if (userSignal.aborted) deadline.abort(userSignal.reason);
      else userSignal.addEventListener('abort', onUserAbort!, { once: true });
    }
    const startedAt = clock.now();
    let answer: Answer;
    try {
      answer = await this.#exchange(spec, url, body, deadline.signal);
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      const cause = sanitizeCause(error, [this.#settings.apiKey]);
      const failure = deadline.signal.aborted
        ? new TimeoutError(timeoutMessage(request, attemptNumber, attemptTimeoutMs, attemptTimeoutMs < call.timeoutMs), { cause })
        : new ConnectionError(`could not reach the service for ${request.method} ${request.path} (attempt ${attemptNumber})`, { cause });
      this.#logAttempt(request, attemptNumber, clock.now() - startedAt, { error: failure.name });
      throw failure;
    } finally {
      // The answer is in (or the attempt failed): a bucket that waits for it may start refilling.
      attemptFinished?.();
      cancelDeadline();
      if (onUserAbort !== undefined) userSignal!.removeEventListener('abort', onUserAbort);
      budget.spend(clock.now() - startedAt);
    }
    if (this.#settings.logger?.debug) this.#logAttempt(request, attemptNumber, clock.now() - startedAt, { status: answer.status });

    if (answer.tooLarge) {
      throw new ResponseValidationError({ issues: [{ path: '', message: `the answer is larger than ${MAX_RESPONSE_BYTES} bytes: not read` }], status: answer.status, requestMethod: request.method, requestPath: request.path });
    }
    if (answer.status < 200 || answer.status > 299) throw errorFromAnswer(answer, request, this.#settings.apiKey);
    if (spec.schema === undefined) return undefined as T;
    const parsed = parseBody(answer.text);
    const validated = parsed.ok ? validateResponse(spec.schema, parsed.value) : parsed;
    if (!validated.ok) throw new ResponseValidationError({ issues: validated.issues, status: answer.status, requestMethod: request.method, requestPath: request.path });
    return validated.value;
  }

  /**
   * The HTTP exchange itself, through ky: one request, then the body read in full. Retries,
   * deadlines, redirects and errors are the caller's.
   *
   * Rejects with `signal.reason` as soon as `signal` aborts, even if a custom `fetch` ignores it.
   */
  #exchange(spec: RequestSpec<unknown>, url: URL, body: string | undefined, signal: AbortSignal): Promise<Answer> {
    const input = url.pathname.slice(this.#prefixPath.length + 1) + url.search;
    const pending =
      body === undefined
        ? this.#http(input, { method: spec.method, signal })
        : this.#http(input, { method: spec.method, body, headers: { 'Content-Type': 'application/json' }, signal });
    // One race for the whole exchange, answer and body: a custom fetch may ignore the signal, and
    // the deadline must hold anyway.
    return raceAbort(readAnswer(pending, signal, this.#settings.clock), signal);
  }

  #buildUrl(spec: RequestSpec<unknown>): URL {
    let path = spec.path.startsWith(`${API_PREFIX}/`) || spec.path === API_PREFIX ? spec.path.slice(API_PREFIX.length) : spec.path;
    if (!path.startsWith('/')) path = `/${path}`;
    checkPathSegments(path);
    const url = new URL(this.#settings.baseUrl + path);
    // However the path was spelled, the request stays under /integration/v1: the key goes nowhere else.
    if (!url.pathname.startsWith(`${this.#prefixPath}/`)) throw new InvalidInputError([{ path: 'path', message: `must stay under ${API_PREFIX}` }]);
    if (spec.query !== undefined) {
      for (const name in spec.query) {
        if (!Object.hasOwn(spec.query, name)) continue;
        const value: unknown = spec.query[name];
        if (value === undefined) continue;
        if (typeof value !== 'string' && typeof value !== 'boolean' && !(typeof value === 'number' && Number.isFinite(value))) {
          throw new InvalidInputError([{ path: `query.${name}`, message: 'must be a string, a finite number or a boolean' }]);
        }
        url.searchParams.append(name, String(value));
      }
    }
    return url;
  }

  #retryAfterTooLong(error: RateLimitError): boolean {
    return error.retryAfterMs !== undefined && error.retryAfterMs > this.#settings.maxRetryAfterMs;
  }

  /** The key's budget is shared: every call of this client waits, not only the one that met the 429. */
  #pauseEveryCall(error: RateLimitError, path: string): void {
    const pauseMs = rateLimitWait(error);
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#settings.clock.now() + pauseMs);
    this.#settings.limiter.pause(pauseMs);
    this.#settings.logger?.warn?.('integration-sdk rate limited: pausing every call of this client', { path, pauseMs });
  }

  #logAttempt(request: { method: string; path: string }, attempt: number, ms: number, outcome: { status: number } | { error: string }): void {
    this.#settings.logger?.debug?.('integration-sdk attempt', { method: request.method, path: request.path, ...outcome, attempt, ms: Math.round(ms) });
  }
}

/**
 * The time a call may spend on attempts and waits (`totalTimeoutMs`), counted only while it
 * works or waits on its own account, not while queued behind the rate limiter.
 */
class Budget {
  readonly #totalMs: number;
  #spentMs = 0;

  constructor(totalMs: number) {
    this.#totalMs = totalMs;
  }

  remaining(): number {
    return Math.max(0, this.#totalMs - this.#spentMs);
  }

  /** Whether a wait of `ms` would end before the deadline, leaving time for one more attempt. */
  allows(ms: number): boolean {
    return this.#spentMs + ms < this.#totalMs;
  }

  spend(ms: number): void {
    this.#spentMs += Math.max(0, ms);
  }
}

/**
 * Waits for the answer and reads its body in full. An answer that comes after `signal` aborted (a
 * fetch that ignores the signal), or whose body fails, has its body cancelled, freeing the
 * connection. `Retry-After` is read only from a non-2xx answer: nothing else uses it.
 */
async function readAnswer(pending: Promise<Response>, signal: AbortSignal, clock: Clock): Promise<Answer> {
  const response = await pending;
  try {
    signal.throwIfAborted();
    const { status } = response;
    const text = await readText(response);
    const retryAfterMs = status >= 200 && status <= 299 ? undefined : parseRetryAfter(response.headers.get('retry-after'), clock.now());
    return { status, headers: response.headers, text: text ?? '', retryAfterMs, tooLarge: text === undefined };
  } catch (error) {
    response.body?.cancel().catch(() => {});
    throw error;
  }
}

/** The body as text, or `undefined` (and the rest cancelled) past `MAX_RESPONSE_BYTES`. */
async function readText(response: Response): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_RESPONSE_BYTES) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return utf8.decode(bytes);
}

const utf8 = new TextDecoder();

function rateLimitWait(error: RateLimitError): number {
  return error.retryAfterMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS;
}

function timeoutMessage(request: { method: string; path: string }, attempt: number, ms: number, budgetRanOut: boolean): string {
  return budgetRanOut
    ? `${request.method} ${request.path} ran out of its totalTimeoutMs during attempt ${attempt} (${ms} ms left)`
    : `${request.method} ${request.path} did not finish within timeoutMs (${ms} ms, body included) on attempt ${attempt}`;
}

/** The request body as JSON text; `InvalidInputError` (without the error's message: it may quote the body) when JSON cannot carry it. */
function serializeBody(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  try {
    return JSON.stringify(body);
  } catch {
    throw new InvalidInputError([{ path: 'body', message: 'cannot be sent as JSON (a BigInt, a circular reference, or a toJSON that throws)' }]);
  }
}

function parseBody(text: string): { ok: true; value: unknown } | { ok: false; issues: { path: string; message: string }[] } {
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, issues: [{ path: '', message: 'the body is not JSON' }] };
  }
}

/** Path segments that are empty, `.` or `..` (encoded or not), or hold a backslash, would move the request off its route. */
function checkPathSegments(path: string): void {
  for (const raw of path.slice(1).split('/')) {
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // a malformed escape is sent as it is, and the service answers 404
    }
    if (decoded === '' || decoded === '.' || decoded === '..' || raw.includes('\\')) {
      throw new InvalidInputError([{ path: 'path', message: 'has a path segment that is empty, "." or ".." (an id must name one resource)' }]);
    }
  }
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
