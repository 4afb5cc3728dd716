import { ConfigurationError } from '../errors/index.ts';
import { systemClock, type Clock } from '../clock.ts';
import { API_PREFIX, type TransportSettings } from './http-requester.ts';
import type { Logger } from './logger.ts';
import { PauseOnlyLimiter, TokenBucket, type RateLimiter, type TokenBucketOptions } from './rate-limiter.ts';

/**
 * Options of `new IntegrationClient(options)`. Only `apiKey` and `baseUrl` are required.
 *
 * @example
 * ```ts
 * const client = new IntegrationClient({
 *   apiKey: process.env.INTEGRATION_API_KEY!,
 *   baseUrl: 'https://platform.example.com',
 * });
 * ```
 */
export interface IntegrationClientOptions {
  /**
   * The complete key, `service_<key_id>_<secret>`, as shown once in the dashboard. Sent in the
   * `X-API-Key` header only; never logged, never in an error.
   *
   * @example
   * ```ts
   * new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY!, baseUrl });
   * ```
   */
  apiKey: string;
  /**
   * The platform's address. `/integration/v1` is appended unless already there. `http://` is
   * accepted only for loopback hosts (a local sandbox): elsewhere the key would travel in clear.
   *
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl: 'https://platform.example.com' });
   * new IntegrationClient({ apiKey, baseUrl: 'http://127.0.0.1:8787/integration/v1' }); // sandbox
   * ```
   */
  baseUrl: string;
  /**
   * Per attempt, in milliseconds, reading the whole body included.
   *
   * @default 30_000
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, timeoutMs: 10_000 });
   * ```
   */
  timeoutMs?: number;
  /**
   * All attempts and waits of one call together, in milliseconds. Time queued behind the client's
   * own rate limiter is not counted.
   *
   * @default 120_000
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, totalTimeoutMs: 60_000 });
   * ```
   */
  totalTimeoutMs?: number;
  /**
   * Retries after the first attempt, for failures the retry rules allow.
   *
   * @default 3
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, maxRetries: 5 });
   * ```
   */
  maxRetries?: number;
  /**
   * The longest `Retry-After` the client waits; a longer one throws `RateLimitError` at once.
   *
   * @default 60_000
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, maxRetryAfterMs: 5_000 });
   * ```
   */
  maxRetryAfterMs?: number;
  /**
   * Client-side pacing: a token bucket shared by every call of this client (`burst` at once, then
   * exactly `requestsPerMinute`), your own `RateLimiter` (to share one key between processes), or
   * `false` for none. With `false` a 429 still pauses every call of the client.
   *
   * @default { requestsPerMinute: 120, burst: 120 }
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, rateLimit: { requestsPerMinute: 60, burst: 10 } });
   * new IntegrationClient({ apiKey, baseUrl, rateLimit: false });
   * ```
   */
  rateLimit?: TokenBucketOptions | RateLimiter | false;
  /**
   * Any fetch-compatible function (a proxy agent, a test double), called as `fetch(url, init)`: an
   * absolute URL string, and a plain object with `method`, `headers` (a plain object), `body` (JSON
   * text, if any), `redirect: 'manual'` and `signal` (the attempt's deadline or your call's signal).
   *
   * @default globalThis.fetch, looked up at each request (so msw or a spy installed later applies)
   * @example
   * ```ts
   * import { fetch as undiciFetch, ProxyAgent } from 'undici';
   * const dispatcher = new ProxyAgent('http://proxy.internal:3128');
   * new IntegrationClient({ apiKey, baseUrl, fetch: (input, init) => undiciFetch(input, { ...init, dispatcher }) });
   * ```
   */
  fetch?: typeof globalThis.fetch;
  /**
   * Receives one `debug` line per attempt (method, path without query, status, attempt, ms) and a
   * `warn` when a 429 pauses the client. Never the key, a secret, a body or a query value.
   *
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, logger: console });
   * ```
   */
  logger?: Partial<Logger>;
  /**
   * Time source for backoff, deadlines and the token bucket. For tests; `now()` must return epoch
   * milliseconds if HTTP-date `Retry-After` values are to be read correctly.
   *
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, clock: { now: () => fakeNow, setTimeout: fakeSetTimeout } });
   * ```
   */
  clock?: Clock;
  /**
   * Source of the backoff jitter, in [0, 1). For tests.
   *
   * @default Math.random
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, random: () => 0.5 }); // every backoff at half its cap
   * ```
   */
  random?: () => number;
  /**
   * Makes the `idempotency_key` of loyalty writes left without one. For tests.
   *
   * @default globalThis.crypto.randomUUID
   * @example
   * ```ts
   * new IntegrationClient({ apiKey, baseUrl, randomUUID: () => 'fixed-key-for-this-test' });
   * ```
   */
  randomUUID?: () => string;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  totalTimeoutMs: 120_000,
  maxRetries: 3,
  maxRetryAfterMs: 60_000,
  rateLimit: { requestsPerMinute: 120, burst: 120 },
} as const;

const MAX_TIMER_MS = 2_147_483_647;

/** Checks every option at once and turns them into transport settings; throws `ConfigurationError`. */
export function transportSettingsFrom(options: IntegrationClientOptions): TransportSettings {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('IntegrationClient needs an options object: new IntegrationClient({ apiKey, baseUrl })');
  checkApiKey(options.apiKey);
  functionOption('randomUUID', options.randomUUID);
  const clock = options.clock ?? systemClock;
  const logger = loggerFrom(options.logger);
  const limiter = limiterFrom(options.rateLimit, clock);
  // A shared limiter (e.g. Redis) keys its bucket by <key_id> of service_<key_id>_<secret>, never the secret.
  limiter.attach?.({ keyId: options.apiKey.split('_')[1]!, logger });
  return {
    apiKey: options.apiKey,
    baseUrl: apiBaseUrl(options.baseUrl),
    timeoutMs: milliseconds('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs),
    totalTimeoutMs: milliseconds('totalTimeoutMs', options.totalTimeoutMs, DEFAULTS.totalTimeoutMs),
    maxRetries: retries(options.maxRetries),
    maxRetryAfterMs: milliseconds('maxRetryAfterMs', options.maxRetryAfterMs, DEFAULTS.maxRetryAfterMs, { allowZero: true }),
    limiter,
    fetch: functionOption('fetch', options.fetch),
    logger,
    clock,
    // Read at call time, like the system clock: a `Math.random` spy installed later still applies.
    random: functionOption('random', options.random) ?? (() => Math.random()),
  };
}

/** Each rule is named; the key itself is never part of a message. */
function checkApiKey(apiKey: unknown): asserts apiKey is string {
  if (apiKey === undefined || apiKey === null || apiKey === '') {
    throw new ConfigurationError('apiKey is missing: pass the key created in the dashboard (service_<key_id>_<secret>), e.g. from process.env.INTEGRATION_API_KEY');
  }
  if (typeof apiKey !== 'string') throw new ConfigurationError(`apiKey must be a string, got ${typeof apiKey}`);
  if (/\s/.test(apiKey)) throw new ConfigurationError('apiKey contains whitespace (a space or line break copied with it?); the service would reject it');
  // Anything else outside visible ASCII cannot travel in a header: fetch would refuse every request.
  if (/[^\x21-\x7e]/.test(apiKey)) throw new ConfigurationError('apiKey contains a character that is not visible ASCII (a control character or a typographic character pasted with it?)');
  if (!apiKey.startsWith('service_')) {
    throw new ConfigurationError('apiKey does not start with "service_": pass the complete key, not only its secret part, and no "Bearer" prefix');
  }
  if (!/^service_[^_]+_.+$/.test(apiKey)) throw new ConfigurationError('apiKey is not of the form service_<key_id>_<secret>: the key id or the secret part is missing');
}

function apiBaseUrl(baseUrl: unknown): string {
  if (baseUrl === undefined || baseUrl === null || baseUrl === '') throw new ConfigurationError('baseUrl is missing: pass the platform address, e.g. https://platform.example.com');
  if (typeof baseUrl !== 'string') throw new ConfigurationError(`baseUrl must be a string, got ${typeof baseUrl}`);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigurationError('baseUrl is not an absolute URL (it needs the scheme, e.g. https://platform.example.com)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigurationError(`baseUrl must use https:// (got ${url.protocol}//)`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new ConfigurationError('baseUrl uses http:// for a host that is not loopback: the key would travel in clear; use https:// (http:// is accepted only for localhost, 127.0.0.0/8 and [::1])');
  }
  if (url.username || url.password) throw new ConfigurationError('baseUrl must not hold credentials: the key goes in apiKey');
  if (url.search || url.hash) throw new ConfigurationError('baseUrl must not have a query string or a fragment');
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith(API_PREFIX) ? path : `${path}${API_PREFIX}`}`;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function milliseconds(name: string, value: unknown, fallback: number, { allowZero = false } = {}): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || (!allowZero && value === 0) || value > MAX_TIMER_MS) {
    throw new ConfigurationError(`${name} must be a number of milliseconds ${allowZero ? '≥ 0' : '> 0'} (at most ${MAX_TIMER_MS})`);
  }
  return value;
}

function retries(value: unknown): number {
  if (value === undefined) return DEFAULTS.maxRetries;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new ConfigurationError('maxRetries must be a whole number ≥ 0');
  return value;
}

function limiterFrom(rateLimit: IntegrationClientOptions['rateLimit'], clock: Clock): RateLimiter {
  if (rateLimit === false) return new PauseOnlyLimiter(clock);
  const option: unknown = rateLimit ?? DEFAULTS.rateLimit;
  if (typeof option !== 'object' || option === null) throw new ConfigurationError('rateLimit must be { requestsPerMinute, burst }, a RateLimiter, or false');
  if (typeof (option as RateLimiter).acquire === 'function' && typeof (option as RateLimiter).pause === 'function') return option as RateLimiter;
  const { requestsPerMinute = DEFAULTS.rateLimit.requestsPerMinute, burst = DEFAULTS.rateLimit.burst } = option as Partial<TokenBucketOptions>;
  if (typeof requestsPerMinute !== 'number' || !(requestsPerMinute > 0) || !Number.isFinite(requestsPerMinute)) throw new ConfigurationError('rateLimit.requestsPerMinute must be a number > 0');
  if (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1) throw new ConfigurationError('rateLimit.burst must be a number ≥ 1');
  return new TokenBucket({ requestsPerMinute, burst }, clock);
}

function functionOption<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new ConfigurationError(`${name} must be a function`);
  return value;
}

function loggerFrom(logger: unknown): Partial<Logger> | undefined {
  if (logger === undefined || logger === null) return undefined;
  if (typeof logger !== 'object' && typeof logger !== 'function') throw new ConfigurationError('logger must be an object with debug, info, warn and error methods (console works)');
  // A logger that throws (a full disk, a closed stream) must not fail the request it reports on.
  const safe: Partial<Logger> = {};
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    const write = (logger as Partial<Logger>)[level];
    if (typeof write !== 'function') continue;
    safe[level] = (message, fields) => {
      try {
        write.call(logger, message, fields);
      } catch {
        // Logging is best effort.
      }
    };
  }
  return safe;
}
