// What the CLI prints when a command cannot finish: one sentence that says what to do, an exit
// code, and never the key (even if a user pasted it where an argument was expected).
import { ApiError, AuthenticationError, BulkOperationError, ConfigurationError, ConnectionError, FeatureDisabledError, InvalidInputError } from '../index.ts';
import { UsageError } from './config.ts';

/** Redacts anything that looks like a key from text the CLI did not write itself (argument echoes). */
export function redact(text: string): string {
  const key = process.env.INTEGRATION_API_KEY?.trim();
  let out = key ? text.replaceAll(key, '[redacted]') : text;
  out = out.replace(/\b(service|sk|whsec)_[A-Za-z0-9_-]{6,}/g, '[redacted]');
  return out;
}

/** Maps what a command threw to a one-sentence message and an exit code. */
export function failure(error: unknown): { message: string; code: number } {
  if (error instanceof BulkOperationError && error.cause !== undefined) return failure(error.cause);
  if (error instanceof UsageError || error instanceof ConfigurationError) return { message: error.message, code: 2 };
  if (error instanceof AuthenticationError) return { message: 'The service rejected the key (401): check INTEGRATION_API_KEY or --api-key-file.', code: 2 };
  if (error instanceof FeatureDisabledError) return { message: 'The integration is disabled for this merchant (FEATURE_DISABLED): ask the platform to enable it.', code: 2 };
  if (error instanceof ConnectionError) return { message: `Cannot reach the service (${error.message}): check INTEGRATION_BASE_URL and the network.`, code: 2 };
  if (error instanceof InvalidInputError) return { message: error.message, code: 2 };
  if (error instanceof ApiError) return { message: `${error.name}: ${error.message}`, code: 1 };
  return { message: error instanceof Error ? `${error.name}: ${error.message}` : String(error), code: 2 };
}

