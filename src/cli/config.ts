// Where the CLI gets its key and base URL: the environment or a key file, never a plain argument
// (an argument shows in `ps` and shell history). Messages never contain the key.
import { existsSync, readFileSync } from 'node:fs';
import { IntegrationClient, type RateLimiter } from '../index.ts';

/** A problem that stops a command before it runs: printed in one sentence, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Options every command that talks to the service accepts. */
export interface ConnectionOptions {
  apiKeyFile?: string;
  baseUrl?: string;
}

/** Reads `.env` in the working directory when present (Node's own loader, no dependency). */
export function loadDotEnv(): void {
  if (existsSync('.env')) process.loadEnvFile('.env');
}

/** The key from `--api-key-file` or INTEGRATION_API_KEY; `UsageError` when neither gives one. */
export function readKey(options: ConnectionOptions): string {
  if (options.apiKeyFile !== undefined) {
    try {
      return readFileSync(options.apiKeyFile, 'utf8').trim();
    } catch {
      throw new UsageError(`Cannot read the key file ${options.apiKeyFile}: check the path and its permissions.`);
    }
  }
  const key = process.env.INTEGRATION_API_KEY?.trim();
  if (!key) throw new UsageError('No API key: set INTEGRATION_API_KEY or pass --api-key-file <path>.');
  return key;
}

/**
 * INTEGRATION_RATE_LIMIT: `off` (a sandbox started with its limit off) or requests per minute for
 * a key granted more than the default 120. Unset: the SDK's default throttle.
 */
export function rateLimitFromEnv(): { rateLimit?: false | { requestsPerMinute: number; burst: number } } {
  const value = process.env.INTEGRATION_RATE_LIMIT?.trim();
  if (!value) return {};
  if (value === 'off') return { rateLimit: false };
  if (/^\d+$/.test(value) && Number(value) > 0) return { rateLimit: { requestsPerMinute: Number(value), burst: Number(value) } }; // burst = one minute, as the default
  throw new UsageError(`INTEGRATION_RATE_LIMIT must be "off" or a whole number of requests per minute, got "${value}".`);
}

/**
 * Builds the client from the environment and options; `UsageError` (exit 2) when it cannot.
 * `rateLimit`: a limiter the caller made (a push reads its wait), instead of INTEGRATION_RATE_LIMIT's.
 */
export function clientFrom(options: ConnectionOptions, rateLimit?: RateLimiter): IntegrationClient {
  const apiKey = readKey(options);
  const baseUrl = options.baseUrl ?? process.env.INTEGRATION_BASE_URL;
  if (!baseUrl) throw new UsageError('No base URL: set INTEGRATION_BASE_URL or pass --base-url <url>.');
  try {
    return new IntegrationClient({ apiKey, baseUrl, ...(rateLimit === undefined ? rateLimitFromEnv() : { rateLimit }) });
  } catch (error) {
    // ConfigurationError messages name the option, never the key's value.
    throw new UsageError(error instanceof Error ? error.message : 'Invalid configuration.');
  }
}
