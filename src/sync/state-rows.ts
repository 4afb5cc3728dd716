// A run's row as both stores select it (SQLite integers, Postgres bigints as strings), read once.
import type { StoredSyncRun, SyncKind, SyncRunOutcome } from './state.ts';

export interface RunRow {
  seq: number | string;
  run_id: string;
  scope: string;
  kind: string;
  base_url: string;
  merchant_id: string;
  is_full: number | boolean;
  started_at: number | string;
  finished_at: number | string | null;
  outcome: string;
  complete: number | boolean;
  total: number | string;
  unchanged: number | string;
  sent: number | string;
  created: number | string | null;
  updated: number | string;
  errors: number | string;
  orphans: number | string | null;
  error: string | null;
}

const orNull = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function runFromRow(row: RunRow): StoredSyncRun {
  return {
    seq: Number(row.seq),
    runId: row.run_id,
    scope: row.scope,
    kind: row.kind as SyncKind,
    baseUrl: row.base_url,
    merchantId: row.merchant_id,
    full: Boolean(row.is_full),
    startedAt: Number(row.started_at),
    finishedAt: orNull(row.finished_at),
    outcome: row.outcome as SyncRunOutcome,
    complete: Boolean(row.complete),
    total: Number(row.total),
    unchanged: Number(row.unchanged),
    sent: Number(row.sent),
    ...(row.created === null ? {} : { created: Number(row.created) }),
    updated: Number(row.updated),
    errors: Number(row.errors),
    orphans: orNull(row.orphans),
    error: row.error,
  };
}
