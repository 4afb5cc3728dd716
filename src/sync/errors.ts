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

/** Why {@link SyncGuardError} refused. */
export type SyncGuardReason = 'empty-run' | 'share' | 'confirm-mismatch';

/**
 * `sync.deactivate` refused: the deactivation looks like a broken export rather than products that
 * left. The last complete run read no items (a header-only file), or the orphans are more than
 * `maxDeactivateShare` of what was acknowledged before (a file cut short), or `confirm` was not the
 * exact count. Nothing was deactivated. Confirm with `{ confirm: error.count }` once you know the
 * products really left, or raise `maxDeactivateShare`.
 *
 * @example
 * ```ts
 * try {
 *   await sync.deactivate('catalog', sync.orphans('catalog'));
 * } catch (error) {
 *   if (error instanceof SyncGuardError) console.warn(`${error.count} of ${error.acknowledged} would go: check the export`);
 * }
 * ```
 */
export class SyncGuardError extends IntegrationError {
  static override readonly errorName: string = 'SyncGuardError';
  readonly kind: SyncKind;
  readonly reason: SyncGuardReason;
  /** The orphans it would deactivate: what `confirm` must be. */
  readonly count: number;
  /** Items of the kind the service acknowledged before (the orphans among them). */
  readonly acknowledged: number;
  /** The share it allows without a confirmation. */
  readonly maxDeactivateShare: number;
  /** The `confirm` given, when it was not the count. */
  readonly confirmed: number | undefined;

  constructor(init: { kind: SyncKind; reason: SyncGuardReason; count: number; acknowledged: number; maxDeactivateShare: number; confirmed?: number }) {
    super(guardMessage(init));
    this.kind = init.kind;
    this.reason = init.reason;
    this.count = init.count;
    this.acknowledged = init.acknowledged;
    this.maxDeactivateShare = init.maxDeactivateShare;
    this.confirmed = init.confirmed;
  }
}

function guardMessage(init: { kind: SyncKind; reason: SyncGuardReason; count: number; acknowledged: number; maxDeactivateShare: number; confirmed?: number }): string {
  const { kind, reason, count, acknowledged } = init;
  const what = `${count} of the ${acknowledged} ${kind} items acknowledged before`;
  const confirm = `confirm the exact count: sync.deactivate('${kind}', orphans, { confirm: ${count} })`;
  if (reason === 'confirm-mismatch') return `Nothing deactivated: { confirm: ${init.confirmed} } does not match the ${what} that would be deactivated; if they really left, ${confirm}.`;
  const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;
  const why =
    reason === 'empty-run'
      ? `the last complete ${kind} run read no items, as an export that broke (a header only, an empty file) would`
      : `that is ${percent(count / acknowledged)}, above maxDeactivateShare ${percent(init.maxDeactivateShare)}, as an export cut short would look`;
  return `Nothing deactivated: it would switch off ${what}, and ${why}. Check the export; if they really left, ${confirm}${reason === 'share' ? ', or raise maxDeactivateShare' : ''}.`;
}
