/**
 * The storage contract of the delta sync. Both shipped stores (SQLite, Postgres) implement it and
 * pass the shared conformance suite (`syncStateConformance`). Times are epoch milliseconds from the
 * sync's clock, passed in so that stores never read the wall clock themselves. Every method works
 * on a window of items (one statement, never one per item), and nothing returns a whole table.
 */

/** `catalog` (products by `external_id`) or `stock` (by `external_id` and `store_id`). */
export type SyncKind = 'catalog' | 'stock';

/** How a run ended: `running` while it runs; `interrupted` when its process died with it running. */
export type SyncRunOutcome = 'running' | 'completed' | 'failed' | 'aborted' | 'interrupted';

/** What the state knows of one item of a scope and kind. */
export interface StoredItem {
  /** Fingerprint of what the service last acknowledged; `null` when nothing was acknowledged yet. */
  fingerprint: string | null;
  /** When that acknowledgement was recorded. */
  sentAt: number | null;
  /** Sequence number of the last run whose input held the item (its first occurrence). */
  seenSeq: number | null;
  /** The item's index in that run's input. */
  seenIndex: number | null;
  /**
   * A batch carried the item and no answer acknowledged it since: none came (a connection cut after
   * the service applied it, a 500, a time-out, a crash) or it was an item error (which may follow a
   * partial write, or an earlier lost answer): the next run sends it whatever its fingerprint.
   */
  inFlight: boolean;
}

/**
 * What a fingerprint becomes when the other kind wrote the same stock pair: it equals no real
 * fingerprint (so the item is sent again) and is not `null` (the item stays acknowledged before,
 * for orphans).
 */
export const OVERWRITTEN = 'overwritten';

/**
 * The fields a catalog `stores[]` block and a stock item both write for a pair, as the item gives
 * them: a field left out is not written (`price_override: null` is: it removes the store's price).
 */
export interface StockPairFields {
  stock_quantity?: number;
  price_override?: number | null;
  active?: boolean;
}

/** The names of {@link StockPairFields}, in a fixed order. */
export const STOCK_PAIR_FIELDS = ['stock_quantity', 'price_override', 'active'] as const;

/**
 * A stock pair (`external_id`, `store_id`) an item writes: a stock item writes its own, a catalog
 * item one per `stores[]` block. Both kinds write the same stock, price and activation of the pair.
 */
export interface StockPair {
  /** The pair's key as the stock kind keys its items. */
  key: string;
  externalId: string;
  storeId: string;
  /** What the item writes to the pair. */
  fields: StockPairFields;
}

/** An item a batch is about to carry: marked in flight (and seen by its run) before the request leaves. */
export interface InFlightItem extends SeenMark {
  /** The stock pairs the item writes: the other kind's fingerprints for them no longer hold. */
  pairs: readonly StockPair[];
}

/** An item of the current run's input: marks it present (orphans) and claimed (the repeat rule). */
export interface SeenMark {
  /** The repeat key: `external_id` for the catalog, the store and `external_id` for stock. */
  key: string;
  externalId: string;
  /** `''` for the catalog. */
  storeId: string;
  index: number;
}

/** An item the service acknowledged (`created` or `updated`); also marked seen at `index`. */
export interface AcknowledgedItem {
  key: string;
  index: number;
  externalId: string;
  storeId: string;
  fingerprint: string;
  /** The stores the item was sent with: what `deactivate` sends `active: false` to. */
  storeIds: string[];
  /**
   * The stock pairs it wrote (see {@link InFlightItem}): their fields are kept with the item (what
   * the other kind's writes are compared with), and the other kind's fingerprints invalidated again.
   */
  pairs?: readonly StockPair[];
}

/** A failed item of a run, as kept for `runErrors` (never the payload). */
export interface RunErrorItem {
  index: number;
  external_id: string;
  /** Stock items only. */
  store_id?: string;
  code: string;
  message: string;
}

/** A run as recorded when it starts. */
export interface NewSyncRun {
  runId: string;
  scope: string;
  kind: SyncKind;
  /** The service's base URL and the key's merchant: what the scope was made of, for people to read. */
  baseUrl: string;
  merchantId: string;
  full: boolean;
  startedAt: number;
}

/** Counts of a run (stock runs have no `created`: PATCH /stock only updates). */
export interface SyncCounts {
  total: number;
  unchanged: number;
  sent: number;
  created?: number;
  updated: number;
  errors: number;
}

/** How a run ended, as the sync records it. */
export interface FinishedSyncRun extends SyncCounts {
  finishedAt: number;
  outcome: Exclude<SyncRunOutcome, 'running' | 'interrupted'>;
  /** Whether the run read its input to the end: only such runs define orphans. */
  complete: boolean;
  orphans: number | null;
  /** The error's name and message when the run rejected (never a payload or the key). */
  error: string | null;
}

/** One run of the history. */
export interface StoredSyncRun extends NewSyncRun, SyncCounts {
  /** Increases with every run of the state: orders runs and marks which run saw an item. */
  seq: number;
  finishedAt: number | null;
  outcome: SyncRunOutcome;
  complete: boolean;
  orphans: number | null;
  error: string | null;
}

/** An item acknowledged before and absent from the last complete run. */
export interface OrphanRow {
  key: string;
  externalId: string;
  storeId: string;
  storeIds: string[];
  sentAt: number;
}

/** Who holds a kind's lease in a scope. */
export interface LeaseHolder {
  runId: string;
  startedAt: number;
  /** The host and process id of the holder's process, when it recorded them. */
  host: string | null;
  pid: number | null;
}

/**
 * Where a sync keeps fingerprints, run history and leases. Implement it for another database and
 * run `syncStateConformance` against it.
 *
 * @example
 * ```ts
 * import { createSync } from 'integration-sdk/sync';
 * import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
 *
 * const sync = createSync({ client, state: sqliteSyncState({ path: './integration-state.db' }) });
 * ```
 */
export interface SyncState {
  /** Creates the tables when missing; every other method calls it first. */
  migrate(): Promise<void>;
  /**
   * Takes the lease of (`scope`, `kind`) for `runId` until `now + leaseMs`, recording the taker's
   * `host` and `pid`, unless another run holds it unexpired: then returns that holder and changes
   * nothing. `replacing` names a holder known to be gone (its process no longer exists): its lease
   * is taken even unexpired, if it still holds it. A run whose lease was taken while it was
   * `running` is marked `interrupted`.
   */
  acquireLease(request: {
    scope: string;
    kind: SyncKind;
    runId: string;
    startedAt: number;
    now: number;
    leaseMs: number;
    host?: string;
    pid?: number;
    replacing?: string;
  }): Promise<LeaseHolder | null>;
  /** Extends the lease held by `runId`; `false` when it no longer holds it. */
  renewLease(request: { scope: string; kind: SyncKind; runId: string; now: number; leaseMs: number }): Promise<boolean>;
  releaseLease(request: { scope: string; kind: SyncKind; runId: string }): Promise<void>;
  /** Records a run as `running`; returns its sequence number. */
  startRun(run: NewSyncRun): Promise<number>;
  finishRun(runId: string, finished: FinishedSyncRun): Promise<void>;
  /** What is stored of each of `keys` (absent keys are left out). */
  lookup(scope: string, kind: SyncKind, keys: readonly string[]): Promise<Map<string, StoredItem>>;
  /** Marks the items as seen by run `seq` at their index, creating rows (without fingerprint) as needed. */
  markSeen(scope: string, kind: SyncKind, seq: number, marks: readonly SeenMark[]): Promise<void>;
  /**
   * In one transaction, durable before the batch carrying `items` leaves: marks them in flight and
   * seen by run `seq` (as {@link markSeen}), and, for the stock pairs they write, invalidates the
   * other kind's fingerprint (sets it to {@link OVERWRITTEN}) where what the other kind last had
   * acknowledged for the pair no longer holds: for a catalog item, the stock item of each pair; for
   * a stock item, its product's catalog item when that was last acknowledged with the pair's store
   * (in any letter case). It no longer holds when the two differ on a field both give (see
   * {@link StockPairFields}), or when the other kind's fields for the pair are not known (an item
   * acknowledged by an earlier version): fields only one of them gives do not count.
   */
  markInFlight(request: { scope: string; kind: SyncKind; seq: number; items: readonly InFlightItem[] }): Promise<void>;
  /**
   * Records, in one transaction, what a batch's answer acknowledged (fingerprint, time, stores,
   * seen by run `seen.seq` at its index, in flight no more, and the other kind's fingerprints of
   * its `pairs` invalidated again as by {@link markInFlight}), the seen marks of its other items (as
   * {@link markSeen}), and the run's failed items. Only an acknowledgement clears an in-flight mark:
   * the batch's other items (item errors among them) stay in flight, their fingerprint kept.
   */
  recordBatch(request: {
    scope: string;
    kind: SyncKind;
    runId: string;
    sentAt: number;
    seen: { seq: number; marks: readonly SeenMark[] };
    acknowledged: readonly AcknowledgedItem[];
    errors: readonly RunErrorItem[];
  }): Promise<void>;
  /** Items with a fingerprint last seen before run `seq`, by key, after `afterKey`, at most `limit`. */
  orphans(scope: string, kind: SyncKind, seq: number, afterKey: string | null, limit: number): Promise<OrphanRow[]>;
  countOrphans(scope: string, kind: SyncKind, seq: number): Promise<number>;
  /** Items of the scope and kind the service acknowledged at some time (with a fingerprint). */
  countAcknowledged(scope: string, kind: SyncKind): Promise<number>;
  /** Forgets every item of the scope and kind, or those with one of `externalIds`; returns how many rows went. */
  forget(scope: string, kind: SyncKind, externalIds?: readonly string[]): Promise<number>;
  /** Forgets the items with these repeat keys (a stock pair, not every store of its product). */
  forgetKeys(scope: string, kind: SyncKind, keys: readonly string[]): Promise<number>;
  /** The last run of the scope and kind that read its input to the end. */
  lastCompleteRun(scope: string, kind: SyncKind): Promise<StoredSyncRun | null>;
  /** Runs newest first, those with `seq < beforeSeq` when given, of `scope` only when given. */
  runs(limit: number, beforeSeq?: number, scope?: string): Promise<StoredSyncRun[]>;
  run(runId: string): Promise<StoredSyncRun | null>;
  /** A run's failed items in input order, those with `index > afterIndex`, at most `limit`. */
  runErrors(runId: string, afterIndex: number, limit: number): Promise<RunErrorItem[]>;
  close(): Promise<void>;
}
