// The batching engine: keeps up to `concurrency` batches in flight, hands windows back strictly in
// input order, and on a failure starts nothing new, lets what is in flight settle, and reports.
import { raceAbort } from '../../clock.ts';
import type { ItemResultShape } from './route.ts';
import type { Window, WindowSource } from './windowing.ts';

/** A window whose batch the service answered (or that had none to send). */
export interface SettledWindow<Result> {
  window: Window<Result>;
  /** `null` when the window had nothing to send. */
  sync_id: string | null;
  /** Every item of the window, in input order, with global indexes. */
  results: Result[];
}

interface RunFailureInit<Result> {
  source: 'batch' | 'input';
  start: number;
  end: number | undefined;
  cause: unknown;
  later: SettledWindow<Result>[];
  alsoFailed: Window<Result>[];
}

/**
 * Why a run stopped early. Not an `Error`: the public entry points always turn it into a
 * `BulkOperationError` with the partial result they owe their caller.
 */
export class RunFailure<Result> {
  /** A batch failed after its retries, or reading the input failed. */
  readonly source: 'batch' | 'input';
  /** First global index without a result because of this failure. */
  readonly start: number;
  /** Last index of the failed batch's window; `undefined` when reading the input failed. */
  readonly end: number | undefined;
  readonly cause: unknown;
  /** Windows after the failed one that succeeded, in input order; none of them was handed out. */
  readonly later: SettledWindow<Result>[];
  /** Further windows that failed too (their items have no result either). */
  readonly alsoFailed: Window<Result>[];

  constructor(init: RunFailureInit<Result>) {
    this.source = init.source;
    this.start = init.start;
    this.end = init.end;
    this.cause = init.cause;
    this.later = init.later;
    this.alsoFailed = init.alsoFailed;
  }
}

type Outcome<Result> = { ok: true; value: SettledWindow<Result> } | { ok: false; error: unknown };

interface Slot<Result> {
  window: Window<Result>;
  outcome?: Outcome<Result>;
  settled: Promise<void>;
}

export interface RunPlan<Result> {
  source: WindowSource<Result>;
  /** Sends a window's batch; resolves with its results, rejects with the batch's error. */
  send: (window: Window<Result>) => Promise<SettledWindow<Result>>;
  /** Windows with nothing to send are settled at once. */
  settleUnsent: (window: Window<Result>) => SettledWindow<Result>;
  concurrency: number;
  signal: AbortSignal | undefined;
}

/**
 * Yields settled windows in input order; throws {@link RunFailure} on a failed batch or input, and
 * the signal's reason on abort. At most `concurrency` batches are in flight, and at most
 * `concurrency` more windows wait for an earlier one to finish, so a stream is read only that far
 * ahead of what has been handed back.
 */
export async function* runWindows<Result extends ItemResultShape>(plan: RunPlan<Result>): AsyncGenerator<SettledWindow<Result>, void, undefined> {
  const { source, concurrency, signal } = plan;
  const slots: Slot<Result>[] = [];
  let inFlight = 0;
  let stopped = false;
  let inputEnded = false;
  let inputError: { error: unknown } | undefined;
  let wake: () => void = () => {};

  const start = (window: Window<Result>): void => {
    if (window.batch.length === 0) {
      slots.push({ window, outcome: { ok: true, value: plan.settleUnsent(window) }, settled: Promise.resolve() });
      return;
    }
    const slot: Slot<Result> = { window, settled: Promise.resolve() };
    inFlight += 1;
    slot.settled = plan.send(window).then(
      (value) => {
        slot.outcome = { ok: true, value };
      },
      (error: unknown) => {
        slot.outcome = { ok: false, error };
        stopped = true; // start no new batch once one has failed
      },
    ).finally(() => {
      inFlight -= 1;
      wake();
    });
    slots.push(slot);
  };

  try {
    for (;;) {
      signal?.throwIfAborted();
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      while (!stopped && !inputEnded && inFlight < concurrency && slots.length < 2 * concurrency) {
        let window: Window<Result> | undefined;
        try {
          window = await source.next();
        } catch (error) {
          signal?.throwIfAborted();
          inputError = { error };
          stopped = true;
          break;
        }
        if (window) start(window);
        else inputEnded = true;
      }
      const head = slots[0];
      if (!head) {
        if (inputError) {
          throw new RunFailure<Result>({ source: 'input', start: source.windowedUpTo, end: undefined, cause: inputError.error, later: [], alsoFailed: [] });
        }
        return;
      }
      if (!head.outcome) {
        await abortable(woken, signal);
        continue;
      }
      if (head.outcome.ok) {
        slots.shift();
        yield head.outcome.value;
        continue;
      }
      await abortable(Promise.all(slots.map((slot) => slot.settled)), signal);
      throw failureOf(head, slots.slice(1));
    }
  } finally {
    source.close();
  }
}

function failureOf<Result>(failed: Slot<Result>, rest: Slot<Result>[]): RunFailure<Result> {
  const later: SettledWindow<Result>[] = [];
  const alsoFailed: Window<Result>[] = [];
  for (const slot of rest) {
    if (slot.outcome?.ok) later.push(slot.outcome.value);
    else alsoFailed.push(slot.window);
  }
  const { window } = failed;
  return new RunFailure<Result>({
    source: 'batch',
    start: window.start,
    end: window.start + window.size - 1,
    cause: failed.outcome && !failed.outcome.ok ? failed.outcome.error : undefined,
    later,
    alsoFailed,
  });
}

/**
 * Waits for `promise`, but rejects with the signal's reason as soon as it is aborted: an abort
 * must not wait for a batch or an input that is slow to notice it.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal ? raceAbort(promise, signal) : promise;
}
