import type { Clock } from '../clock.ts';

/** The store did not write a delivery within `storeTimeoutMs`: the receiver answers 503. */
export class StoreTimeout extends Error {
  constructor(ms: number) {
    super(`The inbox store did not write the delivery within ${ms} ms.`);
    this.name = 'StoreTimeout';
  }
}

/** A handler run that did not settle within `handlerTimeoutMs`: told to `onError`, kept as `lastError`. */
export class HandlerTimeoutError extends Error {
  constructor(ms: number) {
    super(`The handler did not settle within ${ms} ms (handlerTimeoutMs): its signal was aborted and the run counts as failed.`);
    this.name = 'HandlerTimeoutError';
  }
}

/**
 * `promise`, or a rejection with `timedOut()`'s error after `ms` on `clock` (the promise itself
 * goes on: a write or a handler cannot be stopped from outside, only told).
 */
export function withinTime<T>(promise: Promise<T>, ms: number, clock: Clock, timedOut: () => Error): Promise<T> {
  if (ms === Infinity) return promise;
  return new Promise((resolve, reject) => {
    const cancel = clock.setTimeout(() => reject(timedOut()), ms);
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}
