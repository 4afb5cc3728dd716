import type { IntegrationClient } from '../client.ts';
import type { Clock } from '../clock.ts';
import type { BulkInput } from '../resources/bulk/types.ts';
import type { ProductItem, ProductResult } from '../schemas/products.ts';
import type { StockItem, StockItemResult } from '../schemas/stock.ts';
import type { CallOptions } from '../transport/types.ts';
import type { SyncCounts, SyncKind, SyncRunOutcome, SyncState } from './state.ts';

/**
 * Options of `createSync`.
 *
 * @example
 * ```ts
 * const sync = createSync({ client, state: sqliteSyncState({ path: './integration-state.db' }), maxAgeDays: 7 });
 * ```
 */
export interface CreateSyncOptions {
  /** The client whose key the sync writes with; its base URL and `health()` define the state's scope. */
  client: IntegrationClient;
  /** Where fingerprints, run history and leases live: `sqliteSyncState` or `postgresSyncState`. */
  state: SyncState;
  /**
   * Resend an item not sent for more than this many days, even unchanged (repairs edits made
   * elsewhere). `0` resends everything (as `full`); unset or `Infinity`: never for age.
   */
  maxAgeDays?: number;
  /**
   * The share of what was acknowledged that `deactivate` switches off without `{ confirm: n }`:
   * more looks like a broken export, not products that left. @default 0.1
   */
  maxDeactivateShare?: number;
  /** Time source (lease, `maxAgeDays`, run times). For tests. @default the system clock */
  clock?: Clock;
}

/** Progress of a sync run, after every batch answered and every window of the input read. */
export interface SyncProgress {
  /** Items with an outcome: unchanged, rejected locally, or answered. */
  itemsDone: number;
  /** The input's length when it is an array. */
  itemsTotal: number | undefined;
  unchanged: number;
  sent: number;
  /** Catalog runs only. */
  created?: number;
  updated: number;
  errors: number;
}

/**
 * Options of `sync.catalog` and `sync.stock`.
 *
 * @example
 * ```ts
 * await sync.catalog(items, { full: true, onProgress: (p) => console.log(p.itemsDone, p.unchanged) });
 * ```
 */
export interface SyncRunOptions extends CallOptions {
  /** Called after every batch answered and every window of the input read. */
  onProgress?: (progress: SyncProgress) => void;
  /** Send everything and refresh the state. */
  full?: boolean;
  /** Count what would be sent and send nothing; the state is not written. */
  dryRun?: boolean;
  /** Items per request, 1 to 500. @default 500 */
  batchSize?: number;
  /** Batches in flight at once. @default 1 */
  concurrency?: number;
}

/** Shared fields of a run's result. */
interface SyncResultBase<Result> {
  /** This run's id (also in `runs()`; a dry run's id is not recorded). */
  runId: string;
  /** Every input item: `unchanged + sent +` local rejections. */
  total: number;
  /** Items whose fingerprint matched what the service last acknowledged: nothing was sent for them. */
  unchanged: number;
  /** Items put in a request (for a dry run: that would be). */
  sent: number;
  updated: number;
  /** Local rejections (repeats included), items the service refused, and items of failed batches. */
  errors: number;
  /** Items acknowledged before and absent from this run's input, when the run read it to the end; else `null`. */
  orphans: number | null;
  durationMs: number;
  /** One entry per failed item, in input order; never the unchanged ones. */
  results: Result[];
}

/** Result of `sync.catalog`. */
export interface CatalogSyncResult extends SyncResultBase<ProductResult> {
  created: number;
}

/** Result of `sync.stock`: as `StockResult`, no `created` (PATCH /stock only updates). */
export type StockSyncResult = SyncResultBase<StockItemResult>;

/** An item acknowledged before and absent from the last complete run. */
export interface SyncOrphan {
  external_id: string;
  /** Catalog: the stores it was last sent with; stock: its store. */
  store_ids: string[];
  lastSentAt: Date;
}

/** A past run, as `runs()` lists it, with its counts (`created` for catalog runs only). */
export interface SyncRunRecord extends SyncCounts {
  runId: string;
  kind: SyncKind;
  baseUrl: string;
  merchantId: string;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: SyncRunOutcome;
  /** Whether it read its input to the end. */
  complete: boolean;
  full: boolean;
  orphans: number | null;
  durationMs: number | null;
  /** Why it failed, when it rejected. */
  error: string | null;
}

/** A failed item of a past run (never its payload). */
export interface SyncRunError {
  index: number;
  external_id: string;
  store_id?: string;
  code: string;
  message: string;
}

/**
 * Options of `sync.deactivate`: the per-call options of its writes, and its guard.
 *
 * @example
 * ```ts
 * await sync.deactivate('catalog', sync.orphans('catalog'), { confirm: 1200 }); // the count a SyncGuardError stated
 * ```
 */
export interface DeactivateOptions extends CallOptions {
  /** The exact number of orphans to deactivate, as a `SyncGuardError` stated it: deactivates them whatever the guard says. */
  confirm?: number;
  /** Overrides `createSync`'s `maxDeactivateShare` for this call. */
  maxDeactivateShare?: number;
}

/** Result of `sync.deactivate`. */
export interface DeactivateResult {
  /** Orphans whose stores were all set `active: false`; their state is forgotten. */
  deactivated: number;
  /** Orphans with no store to deactivate (a product last sent without `stores`). */
  skipped: number;
  errors: number;
  results: Array<{ external_id: string; store_id?: string; error: { code: string; message: string } }>;
}

/**
 * A delta sync: `catalog` and `stock` send only what changed since the service last acknowledged
 * it.
 *
 * @example
 * ```ts
 * const run = await sync.catalog(items);
 * console.log(`${run.sent} sent, ${run.unchanged} unchanged, ${run.errors} errors`);
 * ```
 */
export interface Sync {
  catalog(items: BulkInput<ProductItem>, options?: SyncRunOptions): Promise<CatalogSyncResult>;
  stock(items: BulkInput<StockItem>, options?: SyncRunOptions): Promise<StockSyncResult>;
  /** Items acknowledged before and absent from the last complete run of `kind` (none before one); each iteration reads the state anew. */
  orphans(kind: SyncKind): AsyncIterable<SyncOrphan>;
  /**
   * Sends `active: false` for each store each orphan was last sent with; forgets those done. Rejects
   * with `SyncGuardError`, deactivating nothing, when the last complete run read no items or the
   * orphans exceed `maxDeactivateShare` of what was acknowledged, unless `confirm` is their exact count.
   */
  deactivate(kind: SyncKind, orphans: Iterable<SyncOrphan> | AsyncIterable<SyncOrphan>, options?: DeactivateOptions): Promise<DeactivateResult>;
  /** Forgets the state of `kind` (or of some `external_id`s): they are sent again next run. Resolves with the rows forgotten. */
  forget(kind: SyncKind, options?: { externalIds?: readonly string[] }): Promise<number>;
  /** The run history, newest first: of this client's scope (service, merchant, key stores), or every scope with `allScopes`. */
  runs(options?: { limit?: number; allScopes?: boolean }): AsyncIterable<SyncRunRecord>;
  /** A past run's failed items, in input order (the first 10,000 of each run are kept). */
  runErrors(runId: string): AsyncIterable<SyncRunError>;
  /** Closes the state. */
  close(): Promise<void>;
}
