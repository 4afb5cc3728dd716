import type { KyInstance, Options as KyOptions } from 'ky';
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
import { Deadline } from './deadline.ts';
import { PauseOutlastsDeadline, type AcquireBudget, type AttemptFinished, type RateLimiter } from './rate-limiter.ts';
import { validateResponse } from './response-issues.ts';
import { parseRetryAfter } from './retry-after.ts';
import { backoffDelay, isRetryable } from './retry-policy.ts';
import { sanitizeCause } from './sanitize-cause.ts';
import { Redactor } from './redact.ts';
import type { RequestSpec, Requester } from './types.ts';
import { traceAttempt, type AttemptContext } from '../diagnostics.ts';
import { checkPathSegments, isWellFormed, notWellFormed } from './input-checks.ts';

// ky is loaded with the first request: it loads undici, 35 ms of the main entry's 85 ms import
// (measured), which a process that sends nothing (a CLI's --help, a webhooks receiver) need not pay.
let kyModule: Promise<typeof import('ky')> | undefined;
const loadKy = () => (kyModule ??= import('ky'));

export const API_PREFIX = '/integration/v1';

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
 * The request pipeline, read top to bottom in `send`. The key lives in private fields only: nothing
 * that logs, inspects or serialises the client can reach it.
 */
export class HttpRequester implements Requester {
  readonly #settings: TransportSettings;
  /** The one ky instance every attempt goes through; it holds the key in its headers, privately. Made on the first request. */
  #ky: Promise<KyInstance> | undefined;
  readonly #kyOptions: KyOptions;
  /** When the pause of the last 429 this client met ends (clock time). */
  #pausedUntil = Number.NEGATIVE_INFINITY;

  /** What no error may carry, in any encoding: the key, and its secret part alone (a server may echo either). */
  readonly #redactor: Redactor;

  /** Diagnostics: `server.address` (host and port), and the path of `/integration/v1` under it. */
  readonly #serverAddress: string;
  readonly #prefixPath: string;

  constructor(settings: TransportSettings) {
    this.#settings = settings;
    const base = new URL(settings.baseUrl);
    this.#serverAddress = base.host;
    this.#prefixPath = base.pathname;
    const secretPart = /^service_[^_]+_(.{8,})$/.exec(settings.apiKey)?.[1];
    this.#redactor = new Redactor(secretPart === undefined ? [settings.apiKey] : [settings.apiKey, secretPart]);
    const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
    this.#kyOptions = {
      prefix: settings.baseUrl,
      headers: { 'X-API-Key': settings.apiKey, Accept: 'application/json', 'User-Agent': `integration-sdk/${VERSION}${node ? ` node/${node}` : ''}` },
      retry: 0,
      throwHttpErrors: false,
      // Our deadline covers the whole exchange, the body read included; ky's would not.
      timeout: false,
      // fetch would keep X-API-Key on a redirect, even to another host: a 3xx becomes ApiError `HTTP_3xx`.
      redirect: 'manual',
      ...(settings.fetch === undefined ? {} : { fetch: settings.fetch }),
    };
  }

  async send<T>(spec: RequestSpec<T>): Promise<T> {
    const call = resolveCallOptions(spec.options, this.#settings);
    const url = this.#buildUrl(spec);
    // Errors and logs name the path without its query: queries can carry a customer's phone.
    const request = { method: spec.method, path: url.pathname };
    const route = spec.route ?? url.pathname.slice(this.#prefixPath.length);
    const budget = new Budget(call.totalTimeoutMs);
    // Once: every retry sends the same text, and a body JSON cannot carry is the caller's mistake, not retried.
    const body = serializeBody(spec.body);
    // Diagnostics: a 429's Retry-After pause, waited before the next attempt, is part of its rate-limit wait.
    let retryAfterWaitedMs = 0;
    let lastError: IntegrationError | undefined;

    return pRetry(
      async (attemptNumber) => {
        // Time queued behind our own limiter's pacing is not in the budget; a 429 pause is (the
        // limiter charges it, and refuses one that would end past the deadline).
        const queuedAt = this.#settings.clock.now();
        const attemptFinished = await this.#acquire(call, budget, request, route, lastError);
        const rateLimitWaitMs = this.#settings.clock.now() - queuedAt + retryAfterWaitedMs;
        retryAfterWaitedMs = 0;
        try {
          return await traceAttempt({ method: spec.method, route, serverAddress: this.#serverAddress, attempt: attemptNumber, rateLimitWaitMs }, (traced) =>
            this.#attempt(spec, url, body, request, attemptNumber, call, budget, attemptFinished, traced),
          );
        } catch (error) {
          if (!(error instanceof IntegrationError)) throw new AbortError(error instanceof Error ? error : new Error(String(error)));
          lastError = error;
          if (attemptNumber > 1 && spec.alreadyDoneOnRetry?.(error)) return undefined as T;
          if (error instanceof RateLimitError) {
            if ((error.retryAfterMs ?? 0) > this.#settings.maxRetryAfterMs) throw new AbortError(error);
            this.#pauseEveryCall(error, request.path);
          }
          if (!isRetryable(error, spec.retry)) throw new AbortError(error);
          throw error;
        }
      },
      {
        retries: call.maxRetries,
        // The wait happens in `shouldRetry`, where the budget and the signal are checked.
        minTimeout: 0,
        maxTimeout: 0,
        signal: call.signal,
        shouldRetry: async ({ error, retriesConsumed }) => {
          const waitMs = error instanceof RateLimitError ? rateLimitWait(error) : backoffDelay(retriesConsumed, this.#settings.random);
          // No wait is started that would end past the call's deadline: the last error is thrown.
          if (!budget.allows(waitMs)) return false;
          await sleep(this.#settings.clock, waitMs, call.signal);
          budget.spend(waitMs);
          if (error instanceof RateLimitError) retryAfterWaitedMs = waitMs;
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
    traced: AttemptContext | undefined,
  ): Promise<T> {
    const { clock } = this.#settings;
    const attemptTimeoutMs = Math.min(call.timeoutMs, budget.remaining());
    // Which one fired, the deadline or the caller's signal, is read from the caller's signal below.
    const deadline = new Deadline(clock, attemptTimeoutMs, call.signal, () => new DOMException(`no complete answer within ${attemptTimeoutMs} ms`, 'TimeoutError'));
    const startedAt = clock.now();
    let answer: Answer;
    try {
      spec.onSend?.();
      answer = await this.#exchange(spec, url, body, deadline.signal);
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      if (error instanceof ResponseTooLarge) {
        throw new ResponseValidationError({ issues: [{ path: '', message: `the answer is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB: not read` }], status: error.status, requestMethod: request.method, requestPath: request.path });
      }
      const cause = sanitizeCause(error, this.#redactor);
      const failure = deadline.signal.aborted
        ? new TimeoutError(timeoutMessage(request, attemptNumber, attemptTimeoutMs, attemptTimeoutMs < call.timeoutMs), { cause })
        : new ConnectionError(`could not reach the service for ${request.method} ${request.path} (attempt ${attemptNumber})`, { cause });
      this.#logAttempt(request, attemptNumber, clock.now() - startedAt, { error: failure.name });
      throw failure;
    } finally {
      // The answer is in (or the attempt failed): a bucket that waits for it may start refilling.
      attemptFinished?.();
      deadline.dispose();
      budget.spend(clock.now() - startedAt);
    }
    if (traced !== undefined) traced.status = answer.status;
    if (this.#settings.logger?.debug) this.#logAttempt(request, attemptNumber, clock.now() - startedAt, { status: answer.status });

    if (answer.status < 200 || answer.status > 299) throw errorFromAnswer(answer, request, this.#redactor);
    if (spec.schema === undefined) return undefined as T;
    const parsed = parseBody(spec.scrubAnswer ? this.#redactor.scrub(answer.text) : answer.text);
    const validated = parsed.ok ? validateResponse(spec.schema, parsed.value) : parsed;
    if (!validated.ok) {
      // Paths name fields of the answer: a field named after the key (a server echoing it) is cut out too.
      const issues = validated.issues.map((issue) => ({ path: this.#redactor.scrub(issue.path), message: issue.message }));
      throw new ResponseValidationError({ issues, status: answer.status, requestMethod: request.method, requestPath: request.path });
    }
    return validated.value;
  }

  /**
   * One call through the client's ky instance, then the body read in full. Rejects with
   * `signal.reason` as soon as `signal` aborts, even if a custom `fetch` ignores it.
   */
  #exchange(spec: RequestSpec<unknown>, url: URL, body: string | undefined, signal: AbortSignal): Promise<Answer> {
    const input = url.href.slice(this.#settings.baseUrl.length + 1);
    this.#ky ??= loadKy().then(({ default: ky }) => ky.create(this.#kyOptions));
    const pending = this.#ky.then((ky) =>
      ky(input, {
        method: spec.method,
        signal,
        ...(body === undefined ? {} : { body, headers: { 'Content-Type': 'application/json' } }),
      }),
    );
    return raceAbort(readAnswer(pending, signal, this.#settings.clock), signal);
  }

  #buildUrl(spec: RequestSpec<unknown>): URL {
    let path = spec.path.startsWith(`${API_PREFIX}/`) || spec.path === API_PREFIX ? spec.path.slice(API_PREFIX.length) : spec.path;
    if (!path.startsWith('/')) path = `/${path}`;
    checkPathSegments(path);
    const url = new URL(this.#settings.baseUrl + path);
    if (spec.query !== undefined) {
      for (const name in spec.query) {
        if (!Object.hasOwn(spec.query, name)) continue;
        const value: unknown = spec.query[name];
        if (value === undefined) continue;
        // String() of an object, a function, NaN or Infinity is never what the caller meant to send.
        if (!(typeof value === 'string' || typeof value === 'boolean' || typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value)))) {
          throw new InvalidInputError([{ path: `query.${name}`, message: 'must be a string, a finite number or a boolean' }]);
        }
        if (typeof value === 'string' && !isWellFormed(value)) throw new InvalidInputError([notWellFormed(`query.${name}`)]);
        url.searchParams.append(name, String(value));
      }
    }
    // Belt and braces: whatever the path, the request stays under the API prefix of baseUrl.
    if (!url.href.startsWith(`${this.#settings.baseUrl}/`)) throw new InvalidInputError([{ path: 'path', message: 'must stay under /integration/v1' }]);
    return url;
  }

  /**
   * A token for the next attempt. A call whose budget ends before the 429 pause does (this client's,
   * or another's through a shared limiter) could only wait and fail: it fails now, without sending,
   * with `RateLimitError` on its first attempt and its last error on a retry. A limiter's failure
   * (`RateLimiterUnavailableError`) is not retried: the call was not sent, and waiting on would
   * only spend the caller's deadline.
   */
  async #acquire(call: ResolvedCallOptions, budget: Budget, request: { method: string; path: string }, route: string, lastError: IntegrationError | undefined): Promise<AttemptFinished | void> {
    const { clock, limiter } = this.#settings;
    // A limiter that does not honour the budget cannot tell us a 429 pause (another client's,
    // through it) from pacing: its whole wait is charged, and its signal aborts at the deadline.
    const budgetLeftMs = budget.remaining();
    const deadline = limiter.honoursBudget === true ? undefined : new Deadline(clock, budgetLeftMs, call.signal, () => new DOMException(`no token within ${budgetLeftMs} ms`, 'TimeoutError'));
    const queuedAt = clock.now();
    try {
      // The client's own pause, for a custom limiter that does not read the budget.
      const ownPauseLeftMs = this.#pausedUntil - clock.now();
      if (ownPauseLeftMs > 0 && ownPauseLeftMs >= budgetLeftMs) throw new PauseOutlastsDeadline(ownPauseLeftMs);
      if (deadline === undefined) return await limiter.acquire(call.signal, budget, { method: request.method, route });
      const granted = limiter.acquire(deadline.signal, budget, { method: request.method, route });
      // A token handed out after the call gave up (a limiter deaf to its signal) goes back at once.
      granted.then((finished) => deadline.signal.aborted && finished?.(), () => {});
      return await raceAbort(granted, deadline.signal);
    } catch (error) {
      if (call.signal?.aborted) throw error;
      if (deadline?.expired) throw new AbortError(lastError ?? queuedPastDeadline(clock.now() - queuedAt, call, request));
      if (error instanceof PauseOutlastsDeadline) throw new AbortError(lastError ?? pausedPastDeadline(error.pauseLeftMs, budget, request));
      if (error instanceof IntegrationError) throw new AbortError(error);
      throw error;
    } finally {
      if (deadline !== undefined) {
        deadline.dispose();
        budget.spend(clock.now() - queuedAt);
      }
    }
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

/** The first attempt of a call meets a 429 pause longer than its budget: `RateLimitError`, not sent. */
function pausedPastDeadline(pauseLeftMs: number, budget: Budget, request: { method: string; path: string }): RateLimitError {
  return new RateLimitError({
    status: 429,
    code: 'RATE_LIMITED',
    message: `the API key is paused for ${Math.ceil(pauseLeftMs)} ms after a 429 (met by this or another client sharing its limiter), longer than the ${Math.floor(budget.remaining())} ms the call has left of its totalTimeoutMs; not sent`,
    requestMethod: request.method,
    requestPath: request.path,
    retryAfterMs: Math.ceil(pauseLeftMs),
  });
}

/** A limiter that does not honour the budget held the first attempt past the call's deadline: `RateLimitError`, not sent. */
function queuedPastDeadline(waitedMs: number, call: ResolvedCallOptions, request: { method: string; path: string }): RateLimitError {
  return new RateLimitError({
    status: 429,
    code: 'RATE_LIMITED',
    message: `the rate limiter held ${request.method} ${request.path} for ${Math.round(waitedMs)} ms, until its totalTimeoutMs (${call.totalTimeoutMs} ms) ran out; not sent`,
    requestMethod: request.method,
    requestPath: request.path,
  });
}

/**
 * The time a call may spend on attempts and waits (`totalTimeoutMs`), not counting the rate-limit
 * queue's pacing. Handed to the limiter, which charges a 429 pause and its own round trips to it.
 */
class Budget implements AcquireBudget {
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

/** The largest answer read: a bulk answer of 500 results is well under 1 MB; more is not the service's. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** An answer larger than `MAX_RESPONSE_BYTES`: read no further. */
class ResponseTooLarge extends Error {
  readonly status: number;

  constructor(status: number) {
    super('response too large');
    this.status = status;
  }
}

/**
 * Reads the answer's body in full, up to `MAX_RESPONSE_BYTES`. One that comes after `signal` aborted,
 * fails or is too large has its body cancelled, freeing the connection.
 */
async function readAnswer(pending: Promise<Response>, signal: AbortSignal, clock: Clock): Promise<Answer> {
  const response = await pending;
  try {
    signal.throwIfAborted();
    const text = await readText(response);
    const { status } = response;
    const retryAfterMs = status >= 200 && status <= 299 ? undefined : parseRetryAfter(response.headers.get('retry-after'), clock.now());
    return { status, headers: response.headers, text, retryAfterMs };
  } catch (error) {
    response.body?.cancel().catch(() => {});
    throw error;
  }
}

async function readText(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_RESPONSE_BYTES) throw new ResponseTooLarge(response.status);
  if (response.body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    if (bytes > MAX_RESPONSE_BYTES) throw new ResponseTooLarge(response.status);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

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
