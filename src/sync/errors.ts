import { IntegrationError } from '../errors/integration-error.ts';
import type { SyncKind } from './state.ts';

/**
 * Another run of the same kind holds the scope's lease (one run per scope and kind at a time).
 * Thrown at once, before anything is read or sent.
 *
 * @example
 * ```ts
 * try {
 *   await sync.catalog(items);
 * } catch (error) {
 *   if (error instanceof SyncRunInProgressError) console.warn(`run ${error.runId} started at ${error.startedAt.toISOString()} is still going`);
 * }
 * ```
 */
export class SyncRunInProgressError extends IntegrationError {
  static override readonly errorName: string = 'SyncRunInProgressError';
  /** The run holding the lease. */
  readonly runId: string;
  /** When it started. */
  readonly startedAt: Date;
  readonly kind: SyncKind;

  constructor(kind: SyncKind, runId: string, startedAt: number) {
    const at = new Date(startedAt).toISOString();
    super(`A ${kind} sync run is already in progress for this service, merchant and key scope: run ${runId}, started ${at}. Wait for it to finish (a run whose process died frees it within 60 s, or at once for the next run on the same host).`);
    this.kind = kind;
    this.runId = runId;
    this.startedAt = new Date(startedAt);
  }
}

/** The run lost its lease (the state was unreachable for longer than the lease, and another run took it). */
export class SyncLeaseLostError extends IntegrationError {
  static override readonly errorName: string = 'SyncLeaseLostError';
}
