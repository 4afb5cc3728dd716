// One run per scope and kind: the lease, taken at the start (or taken over from a run whose process
// on this host is gone), and renewed while the run is alive.
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock } from '../clock.ts';
import { SyncLeaseLostError, SyncRunInProgressError } from './errors.ts';
import type { LeaseHolder, SyncKind, SyncState } from './state.ts';

export const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;

export interface Lease {
  scope: string;
  kind: SyncKind;
  runId: string;
}

let host: string | undefined;
/**
 * This process's host as a lease records it: the host name and, on Linux, the PID namespace. A pid
 * means something only inside its namespace, and two containers may share a host name (host
 * networking): without it, one would take the other's live run for dead.
 */
export function leaseHost(): string {
  if (host !== undefined) return host;
  let namespace = '';
  try {
    namespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // Not Linux, or /proc is not mounted: the host name alone.
  }
  host = namespace === '' ? hostname() : `${hostname()} ${namespace}`;
  return host;
}

/** Whether the holder's process is known to be gone: it ran on this host and its pid no longer exists. */
function holderIsGone(holder: LeaseHolder, host: string): boolean {
  if (holder.host !== host || holder.pid === null || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: a process of another user has that pid, alive.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

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
