// What a run has counted so far: its failed items in input order, the first of them kept for the
// state's `runErrors`, its counts and its progress.
import type { ItemResultShape } from '../resources/bulk/types.ts';
import type { ReadAnswer } from './answers.ts';
import { errorItem, mergeInOrder } from './run-outcome.ts';
import type { RunErrorItem, SyncCounts } from './state.ts';
import type { SyncProgress } from './types.ts';

/** Failed items kept per run in the state for `runErrors` (all of them stay in the result). */
export const MAX_STORED_ERRORS = 10_000;

/** What the input's judge has counted (see `Classifier`). */
interface Judged {
  read: number;
  unchanged: number;
  rejected: number;
}

export class RunTally<Result extends ItemResultShape> {
  sent = 0;
  created = 0;
  updated = 0;
  /** Items the service refused or whose batch failed. */
  serviceErrors = 0;
  /** Failed items, in input order: local rejections and the service's. */
  readonly results: Result[] = [];
  #storedErrors = 0;
  readonly #shape: { catalog: boolean; dryRun: boolean; itemsTotal: number | undefined };

  constructor(shape: { catalog: boolean; dryRun: boolean; itemsTotal: number | undefined }) {
    this.#shape = shape;
  }

  /** A local rejection; returns what the state keeps of it, while under {@link MAX_STORED_ERRORS}. */
  rejected(result: Result): RunErrorItem | undefined {
    this.results.push(result);
    if (this.#shape.dryRun || this.#storedErrors >= MAX_STORED_ERRORS) return undefined;
    this.#storedErrors += 1;
    return errorItem(result);
  }

  /** A batch's answer; returns what the state keeps of its failed items. */
  answered(answer: ReadAnswer<Result>): RunErrorItem[] {
    this.created += answer.created;
    this.updated += answer.updated;
    this.serviceErrors += answer.failed.length;
    mergeInOrder(this.results, answer.failed);
    const kept = answer.failed.slice(0, Math.max(0, MAX_STORED_ERRORS - this.#storedErrors)).map(errorItem);
    this.#storedErrors += kept.length;
    return kept;
  }

  counts(judged: Judged | undefined): Required<SyncCounts> {
    const { sent, created, updated, serviceErrors } = this;
    return { total: judged?.read ?? 0, unchanged: judged?.unchanged ?? 0, sent, created, updated, errors: (judged?.rejected ?? 0) + serviceErrors };
  }

  progress(judged: Judged): SyncProgress {
    const { unchanged, rejected } = judged;
    const { sent, created, updated, serviceErrors } = this;
    return {
      // A dry run's changed items are done once counted: nothing more happens to them.
      itemsDone: unchanged + rejected + created + updated + serviceErrors + (this.#shape.dryRun ? sent : 0),
      itemsTotal: this.#shape.itemsTotal,
      unchanged,
      sent,
      ...(this.#shape.catalog ? { created } : {}),
      updated,
      errors: rejected + serviceErrors,
    };
  }
}
