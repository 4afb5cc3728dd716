/**
 * What needs attention in an inbox, judged from its store: the rules the dashboard's banner and
 * `integration-sdk doctor --store` share, so that both say the same thing at the same moment.
 */
import type { InboxStats, InboxWorkerSeen, MissedDelivery } from './store.ts';

/**
 * A worker records each claim it makes (whether it found work or not) at most every 10 s; one that
 * has not claimed for this long is taken for gone.
 */
export const WORKER_ALIVE_MS = 60_000;
/** Work waiting longer than this with no worker claiming is "no worker is running". */
export const NO_WORKER_AFTER_MS = 60_000;
/** Pending work older than this is worth a look, workers or not. */
export const PENDING_OLD_MS = 15 * 60_000;

/** Entries waiting with no worker to run them. */
export interface NoWorkerRunning {
  /** Entries pending or processing. */
  waiting: number;
  oldestPendingAgeMs: number;
  /** The last claim of any worker, or `null` when none was ever seen (in the last day). */
  lastClaimAt: number | null;
}

/**
 * "No worker is running": entries wait (pending or processing), the oldest for more than a
 * minute, and no worker has claimed in the last minute. `undefined` when that is not so.
 *
 * @example
 * ```ts
 * const stalled = noWorkerRunning(await store.stats(now), await store.workers!(), now);
 * if (stalled) console.log(`no worker is running: ${stalled.waiting} entries wait`);
 * ```
 */
export function noWorkerRunning(
  stats: Pick<InboxStats, 'pending' | 'processing' | 'oldestPendingAgeMs'>,
  workers: readonly Pick<InboxWorkerSeen, 'seenAt'>[],
  now: number,
): NoWorkerRunning | undefined {
  const waiting = stats.pending + stats.processing;
  if (waiting === 0 || stats.oldestPendingAgeMs <= NO_WORKER_AFTER_MS) return undefined;
  const lastClaimAt = workers.reduce<number | null>((latest, worker) => (latest === null || worker.seenAt > latest ? worker.seenAt : latest), null);
  if (lastClaimAt !== null && now - lastClaimAt <= WORKER_ALIVE_MS) return undefined;
  return { waiting, oldestPendingAgeMs: stats.oldestPendingAgeMs, lastClaimAt };
}

/** One thing that needs attention: a failure (nothing gets done) or a warning (a person should look). */
export type InboxAttention =
  | { kind: 'no-worker'; severity: 'fail'; noWorker: NoWorkerRunning }
  | { kind: 'missed'; severity: 'fail'; missed: readonly MissedDelivery[] }
  | { kind: 'dead'; severity: 'warn'; dead: number }
  | { kind: 'pending-old'; severity: 'warn'; oldestPendingAgeMs: number };

/**
 * Everything the store shows that needs attention, failures first: no worker running, missed
 * deliveries still open (`currentMissed`), dead entries, pending work older than 15 minutes
 * (while a worker runs: else it is "no worker").
 */
export function inboxAttention(input: {
  stats: InboxStats;
  /** The workers the store has seen; `undefined` for a store that keeps no heartbeats (the rule is then not judged). */
  workers: readonly Pick<InboxWorkerSeen, 'seenAt'>[] | undefined;
  /** The open misses (`currentMissed`); `undefined` before the first reconcile. */
  missed: readonly MissedDelivery[] | undefined;
  now: number;
}): InboxAttention[] {
  const { stats, workers, missed, now } = input;
  const items: InboxAttention[] = [];
  const noWorker = workers === undefined ? undefined : noWorkerRunning(stats, workers, now);
  if (noWorker) items.push({ kind: 'no-worker', severity: 'fail', noWorker });
  if (missed && missed.length > 0) items.push({ kind: 'missed', severity: 'fail', missed });
  if (stats.dead > 0) items.push({ kind: 'dead', severity: 'warn', dead: stats.dead });
  if (!noWorker && stats.oldestPendingAgeMs >= PENDING_OLD_MS) items.push({ kind: 'pending-old', severity: 'warn', oldestPendingAgeMs: stats.oldestPendingAgeMs });
  return items;
}
