// One run per scope and kind: the lease, taken at the start (or taken over from a run whose process
// on this host is gone), and renewed while the run is alive.
import type { Clock } from '../clock.ts';
import { holderIsGone, leaseHost } from '../storage/lease-holder.ts';
import { SyncLeaseLostError, SyncRunInProgressError } from './errors.ts';
import type { SyncKind, SyncState } from './state.ts';

export const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;

export interface Lease {
  scope: string;
  kind: SyncKind;
  runId: string;
}

export { leaseHost };

/**
 * Takes the lease of `lease.kind` in `lease.scope`, or throws `SyncRunInProgressError` naming the
 * run that holds it. A holder whose process on this host no longer exists is replaced at once: a cron
 * job restarted after a crash does not wait out the dead run's minute.
 */
export async function takeLease(state: SyncState, lease: Lease, at: { startedAt: number; now: number }): Promise<void> {
  const host = leaseHost();
  const request = { ...lease, ...at, leaseMs: LEASE_MS, host, pid: process.pid };
  let holder = await state.acquireLease(request);
  if (holder && holderIsGone(holder, host)) holder = await state.acquireLease({ ...request, replacing: holder.runId });
  if (holder) throw new SyncRunInProgressError(lease.kind, holder.runId, holder.startedAt);
}

/** Renews the lease while the run is alive; a lost lease stops the run. Returns what stops renewing. */
export function keepLease(state: SyncState, clock: Clock, lease: Lease, stop: AbortController): () => void {
  let cancel = () => {};
  let stopped = false;
  const schedule = () => {
    cancel = clock.setTimeout(() => {
      state.renewLease({ ...lease, now: clock.now(), leaseMs: LEASE_MS }).then(
        (held) => {
          if (stopped) return;
          if (!held) stop.abort(new SyncLeaseLostError(`The ${lease.kind} sync run ${lease.runId} lost its lease to another run; it stopped, keeping what was acknowledged.`));
          else schedule();
        },
        () => {
          // The state is unreachable for now: try again at the next tick, the lease lasts 60 s.
          if (!stopped) schedule();
        },
      );
    }, RENEW_EVERY_MS);
  };
  schedule();
  return () => {
    stopped = true;
    cancel();
  };
}
