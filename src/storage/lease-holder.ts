// Who holds a lease (the sync's run, a tenant's rotation): the host and process recorded with it,
// and whether that process is known to be gone, so that a job restarted after a crash takes the
// dead holder's place at once instead of waiting out its lease.
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** The host and process a lease records of its holder (either may be unknown). */
export interface LeaseProcess {
  host: string | null;
  pid: number | null;
}

let host: string | undefined;
/**
 * This process's host as a lease records it: the host name and, on Linux, the PID namespace. A pid
 * means something only inside its namespace, and two containers may share a host name (host
 * networking): without it, one would take the other's live holder for dead.
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
export function holderIsGone(holder: LeaseProcess, here: string = leaseHost()): boolean {
  if (holder.host !== here || holder.pid === null || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: a process of another user has that pid, alive.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
