import { InvalidInputError, type InputIssue } from '../errors/index.ts';
import type { CallOptions } from './types.ts';

export interface ResolvedCallOptions {
  signal: AbortSignal | undefined;
  timeoutMs: number;
  totalTimeoutMs: number;
  maxRetries: number;
}

/** A call's `{ signal, timeoutMs, totalTimeoutMs, maxRetries }` over the client's defaults. */
export function resolveCallOptions(options: CallOptions | undefined, defaults: Omit<ResolvedCallOptions, 'signal'>): ResolvedCallOptions {
  // Most calls pass no options: the client's defaults, already checked by its constructor.
  if (options === undefined) return { signal: undefined, timeoutMs: defaults.timeoutMs, totalTimeoutMs: defaults.totalTimeoutMs, maxRetries: defaults.maxRetries };
  const issues: InputIssue[] = [];
  const pick = (name: 'timeoutMs' | 'totalTimeoutMs' | 'maxRetries'): number => {
    const value = options?.[name];
    if (value === undefined) return defaults[name];
    const valid = name === 'maxRetries' ? Number.isSafeInteger(value) && value >= 0 : typeof value === 'number' && value > 0 && value <= 2_147_483_647;
    if (!valid) issues.push({ path: name, message: name === 'maxRetries' ? 'must be a whole number ≥ 0' : 'must be a number of milliseconds > 0' });
    return value;
  };
  const resolved = { signal: options?.signal, timeoutMs: pick('timeoutMs'), totalTimeoutMs: pick('totalTimeoutMs'), maxRetries: pick('maxRetries') };
  if (options?.signal !== undefined && !(options.signal instanceof AbortSignal)) issues.push({ path: 'signal', message: 'must be an AbortSignal' });
  if (issues.length > 0) throw new InvalidInputError(issues);
  return resolved;
}
