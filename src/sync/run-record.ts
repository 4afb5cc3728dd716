// A past run as `sync.runs()` (and the CLI's `sync runs --all-scopes`) hands it out.
import type { StoredSyncRun } from './state.ts';
import type { SyncRunRecord } from './types.ts';

export function recordOf(run: StoredSyncRun): SyncRunRecord {
  return {
    runId: run.runId,
    kind: run.kind,
    baseUrl: run.baseUrl,
    merchantId: run.merchantId,
    startedAt: new Date(run.startedAt),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt),
    outcome: run.outcome,
    complete: run.complete,
    full: run.full,
    total: run.total,
    unchanged: run.unchanged,
    sent: run.sent,
    ...(run.created === undefined ? {} : { created: run.created }),
    updated: run.updated,
    errors: run.errors,
    orphans: run.orphans,
    durationMs: run.finishedAt === null ? null : run.finishedAt - run.startedAt,
    error: run.error,
  };
}
