// A run's row as both stores select it (SQLite integers, Postgres bigints as strings), read once.
import type { FinishedSyncRun, RunErrorItem, StoredItem, StoredSyncRun, SyncKind, SyncRunOutcome } from './state.ts';

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

/** The columns `finishRun` sets, in the order of {@link finishedValues}. */
export const FINISHED_COLUMNS = ['finished_at', 'outcome', 'complete', 'total', 'unchanged', 'sent', 'created', 'updated', 'errors', 'orphans', 'error'] as const;

/** `finishRun`'s values; `complete` as the driver takes a boolean (SQLite: 0/1). */
export function finishedValues(finished: FinishedSyncRun, complete: (value: boolean) => unknown): unknown[] {
  const { finishedAt, outcome, total, unchanged, sent, updated, errors, orphans, error } = finished;
  return [finishedAt, outcome, complete(finished.complete), total, unchanged, sent, finished.created ?? null, updated, errors, orphans, error];
}

/** A stored failed item as `runErrors` returns it. */
export function runErrorFromRow(row: { idx: number | string; external_id: string; store_id: string | null; code: string; message: string }): RunErrorItem {
  return {
    index: Number(row.idx),
    external_id: row.external_id,
    ...(row.store_id === null ? {} : { store_id: row.store_id }),
    code: row.code,
    message: row.message,
  };
}

type Stored = number | string | null;
const numberOrNull = (value: Stored): number | null => (value === null ? null : Number(value));

/** `lookup`'s rows, by key. */
export function storedItemsByKey(rows: readonly { key: string; fingerprint: string | null; sent_at: Stored; seen_seq: Stored; seen_index: Stored; in_flight: number | boolean }[]): Map<string, StoredItem> {
  const found = new Map<string, StoredItem>();
  for (const row of rows) {
    found.set(row.key, { fingerprint: row.fingerprint, sentAt: numberOrNull(row.sent_at), seenSeq: numberOrNull(row.seen_seq), seenIndex: numberOrNull(row.seen_index), inFlight: Boolean(row.in_flight) });
  }
  return found;
}
