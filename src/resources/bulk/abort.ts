import { raceAbort } from '../../clock.ts';

/**
 * Waits for `promise`, but rejects with the signal's reason as soon as it is aborted: an abort
 * must not wait for a batch or an input that is slow to notice it.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal ? raceAbort(promise, signal) : promise;
}
