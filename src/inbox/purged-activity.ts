// What a purge deletes is kept as counts: the entries received, done and dead per hour, so that the
// dashboard's charts (InboxStore.activity) go on counting what arrived and died after the rows are
// gone. Both shipped stores keep these counts in the same transaction as the DELETE, in a table of
// their own (`inbox_purged_activity`); this file holds what the two share.
import type { InboxActivityBucket, InboxActivityRequest } from './store.ts';

/** The counts of purged entries are kept per hour (of `received_at`, and of `finished_at`). */
export const PURGED_BUCKET_MS = 3_600_000;

/** One hour of purged entries, as either driver returns it. */
export interface PurgedActivityRow {
  hour_start: number | string;
  received: number | string;
  done: number | string;
  dead: number | string;
}

/**
 * The buckets of `activity()` with the counts of purged entries added: an hour's counts go to the
 * bucket holding the start of that hour (exact for buckets of whole hours on hour boundaries, as
 * the dashboard asks; within the hour otherwise).
 */
export function withPurgedActivity(buckets: readonly InboxActivityBucket[], request: InboxActivityRequest, purged: readonly PurgedActivityRow[]): InboxActivityBucket[] {
  const { since, until, bucketMs } = request;
  const byStart = new Map(buckets.map((bucket) => [bucket.start, { ...bucket }]));
  for (const row of purged) {
    const hour = Number(row.hour_start);
    if (hour < since || hour >= until) continue;
    const start = since + Math.floor((hour - since) / bucketMs) * bucketMs;
    let bucket = byStart.get(start);
    if (!bucket) byStart.set(start, (bucket = { start, received: 0, done: 0, dead: 0 }));
    bucket.received += Number(row.received);
    bucket.done += Number(row.done);
    bucket.dead += Number(row.dead);
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}
