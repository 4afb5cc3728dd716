import type { BulkRoute, ItemResultShape } from './route.ts';
import { addToSummary } from './summary.ts';
import type { SettledWindow } from './run.ts';

/** Counts so far, as `onProgress` receives them: the counters plus the route's summary. */
export type ProgressOf<Summary> = Summary & {
  itemsDone: number;
  itemsTotal: number | undefined;
  batchesDone: number;
  batchesTotal: number | undefined;
};

/** Accumulates settled windows and reports after each one, in input order. */
export class ProgressTracker<Result extends ItemResultShape, Summary extends object> {
  readonly #route: BulkRoute<Result, Summary>;
  readonly #onProgress: ((progress: ProgressOf<Summary>) => void) | undefined;
  readonly #itemsTotal: number | undefined;
  readonly #batchesTotal: number | undefined;
  readonly #summary: Summary;
  #itemsDone = 0;
  #batchesDone = 0;

  constructor(
    route: BulkRoute<Result, Summary>,
    totals: { itemsTotal: number | undefined; batchesTotal: number | undefined },
    onProgress: ((progress: ProgressOf<Summary>) => void) | undefined,
  ) {
    this.#route = route;
    this.#onProgress = onProgress;
    this.#itemsTotal = totals.itemsTotal;
    this.#batchesTotal = totals.batchesTotal;
    this.#summary = route.emptySummary();
  }

  /** A window with nothing sent still reports (its items now have results) but is not a batch. */
  record(settled: SettledWindow<Result>): void {
    this.#itemsDone += settled.results.length;
    if (settled.sync_id !== null) this.#batchesDone += 1;
    addToSummary(this.#route, this.#summary, settled.results);
    this.#onProgress?.({
      ...this.#summary,
      itemsDone: this.#itemsDone,
      itemsTotal: this.#itemsTotal,
      batchesDone: this.#batchesDone,
      batchesTotal: this.#batchesTotal,
    });
  }
}
