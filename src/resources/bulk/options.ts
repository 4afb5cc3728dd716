import { ConfigurationError } from '../../errors/index.ts';
import { resolveCallOptions } from '../../transport/call-options.ts';
import type { CallOptions } from '../../transport/types.ts';
import type { BulkOptions } from './types.ts';

/** The service's limit of items per request (spec 4.2 rule 1; the same for PATCH /stock). */
export const MAX_BATCH_SIZE = 500;

/** Bulk options checked, with defaults applied. */
export interface BulkSettings<Progress> {
  batchSize: number;
  concurrency: number;
  onProgress: ((progress: Progress) => void) | undefined;
  /** What every batch's request gets: the per-call options, nothing else. */
  call: CallOptions;
}

function describe(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value;
}

/** Stands in for the client's defaults: only the caller's own values are being checked. */
const ANY_DEFAULTS = { timeoutMs: 1, totalTimeoutMs: 1, maxRetries: 0 };

/**
 * Throws `ConfigurationError` for bad batching options, and the transport's `InvalidInputError` for
 * bad per-call options, before anything is read or sent: a bad `timeoutMs` must not surface as the
 * first batch's failure.
 */
export function resolveBulkOptions<Progress>(options: BulkOptions<Progress> = {}): BulkSettings<Progress> {
  const { batchSize = MAX_BATCH_SIZE, concurrency = 1, onProgress, signal, timeoutMs, totalTimeoutMs, maxRetries } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new ConfigurationError(
      `batchSize must be an integer from 1 to ${MAX_BATCH_SIZE} (the service's limit per request), got ${describe(batchSize)}`,
    );
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigurationError(`concurrency must be an integer of 1 or more (batches in flight at once), got ${describe(concurrency)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new ConfigurationError(`onProgress must be a function, got ${typeof onProgress}`);
  }
  resolveCallOptions({ signal, timeoutMs, totalTimeoutMs, maxRetries }, ANY_DEFAULTS);
  const call: CallOptions = {};
  if (signal !== undefined) call.signal = signal;
  if (timeoutMs !== undefined) call.timeoutMs = timeoutMs;
  if (totalTimeoutMs !== undefined) call.totalTimeoutMs = totalTimeoutMs;
  if (maxRetries !== undefined) call.maxRetries = maxRetries;
  return { batchSize, concurrency, onProgress, call };
}
