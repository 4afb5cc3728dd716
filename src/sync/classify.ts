// Reads the input in windows and sorts each item into rejected (the bulk writes' own checks and
// repeat rule, over the whole input), unchanged (its fingerprint is what the service last
// acknowledged, and no batch carrying it went unanswered) or changed. One state lookup and one write
// per window, never one per item, and a turn of the event loop every few ms of work (see pacer.ts).
import { raceAbort } from '../clock.ts';
import { markCheckedCopy, plainCopy, UNREADABLE_ITEM } from '../resources/bulk/item-checks.ts';
import type { BulkInput, ItemResultShape, ItemRules } from '../resources/bulk/types.ts';
import { FirstOccurrences } from '../resources/bulk/windowing.ts';
import { fingerprintOf } from './fingerprint.ts';
import { Pacer } from './pacer.ts';
import type { SeenMark, StockPair, StoredItem, SyncKind, SyncState } from './state.ts';

/**
 * Items read per state window: one batch's worth (the default batch size), so that when everything
 * changed, reading and hashing the next batch's items spreads evenly over the requests in flight.
 */
export const STATE_WINDOW = 500;

/** A changed item, ready to send. */
export interface ChangedItem {
  /** Position in the whole input. */
  index: number;
  key: string;
  externalId: string;
  storeId: string;
  /** The checked plain copy: what is sent. */
  item: unknown;
  fingerprint: string;
  storeIds: string[];
  /** The stock pairs it writes (see `SyncState.markInFlight`). */
  pairs: StockPair[];
}

/** When an item with a fingerprint is sent anyway. */
export interface ResendRules {
  full: boolean;
  /** `Infinity`: never for age; 0: always. */
  maxAgeMs: number;
  now: number;
}

/** Where the repeat rule remembers keys: the state (flat memory), or memory for a dry run that writes nothing. */
export type RepeatMemory = { kind: 'state'; seq: number } | { kind: 'memory'; seen: FirstOccurrences };

export interface ClassifierPlan<Result extends ItemResultShape> {
  kind: SyncKind;
  rules: ItemRules<Result>;
  storeIdsOf: (checked: unknown) => string[];
  pairsOf: (checked: unknown) => StockPair[];
  state: SyncState;
  scope: string;
  resend: ResendRules;
  repeats: RepeatMemory;
  signal: AbortSignal | undefined;
  /** Called with each local rejection, in input order. */
  onRejected: (result: Result) => void;
  /** Called after each window of the input is read and judged. */
  onWindow: () => void;
}

interface Read {
  index: number;
  item: unknown;
  checked: ReturnType<typeof plainCopy>;
  judged: unknown;
  key: string | undefined;
  unreadable: boolean;
}

export class Classifier<Result extends ItemResultShape> {
  readonly #plan: ClassifierPlan<Result>;
  readonly #iterator: Iterator<unknown> | AsyncIterator<unknown>;
  readonly #async: boolean;
  #buffer: ChangedItem[] = [];
  /**
   * Changed items claimed by this run whose seen marks are not in the state yet: they are written
   * with their batch's in-flight marks (one write instead of two), and found here until then.
   */
  readonly #unwritten = new Map<string, number>();
  readonly #pacer = new Pacer();
  #position = 0;
  #ended = false;
  /** Items read so far. */
  read = 0;
  unchanged = 0;
  rejected = 0;

  constructor(items: BulkInput<unknown>, plan: ClassifierPlan<Result>) {
    this.#plan = plan;
    const asyncIterable = typeof (items as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
    this.#async = asyncIterable && !Array.isArray(items);
    this.#iterator = this.#async ? (items as AsyncIterable<unknown>)[Symbol.asyncIterator]() : (items as Iterable<unknown>)[Symbol.iterator]();
  }

  /** Whether the whole input has been read. */
  get ended(): boolean {
    return this.#ended && this.#position >= this.#buffer.length;
  }

  /**
   * The next changed items, at most `size`, reading further windows as needed: fewer than `size`
   * only at the end of the input (none: the input is done). One await per window, not per item.
   */
  async take(size: number): Promise<ChangedItem[]> {
    const taken: ChangedItem[] = [];
    while (taken.length < size) {
      if (this.#position >= this.#buffer.length) {
        if (this.#ended) break;
        this.#buffer = [];
        this.#position = 0;
        await this.#readWindow();
        continue;
      }
      const end = Math.min(this.#buffer.length, this.#position + size - taken.length);
      for (let i = this.#position; i < end; i += 1) taken.push(this.#buffer[i]!);
      this.#position = end;
    }
    return taken;
  }

  /** The seen marks of these changed items are now in the state (with their in-flight marks). */
  written(items: readonly ChangedItem[]): void {
    for (const item of items) if (this.#unwritten.get(item.key) === item.index) this.#unwritten.delete(item.key);
  }

  /** Stops reading the input (the caller leaves early). */
  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    try {
      const closing = this.#iterator.return?.();
      if (closing && typeof (closing as PromiseLike<unknown>).then === 'function') Promise.resolve(closing).catch(() => {});
    } catch {
      // Not worth hiding why we stopped.
    }
  }

  async #readWindow(): Promise<void> {
    const { signal } = this.#plan;
    const reads: Read[] = [];
    while (reads.length < STATE_WINDOW) {
      signal?.throwIfAborted();
      // Reading a slow iterator is work too: checked every few items, the clock costs next to nothing.
      if ((reads.length & 63) === 0) await this.#pacer.pace();
      const pending = this.#iterator.next();
      // A sync iterator's step is used as is: awaiting every item would cost a turn per item.
      const step = this.#async ? await raceAbort(Promise.resolve(pending), signal) : (pending as IteratorResult<unknown>);
      if (step.done) {
        this.#ended = true;
        break;
      }
      reads.push(this.#copy(this.read++, step.value));
    }
    if (reads.length === 0) return;
    const { state, scope, kind } = this.#plan;
    const keys = [...new Set(reads.flatMap((read) => (read.key === undefined ? [] : [read.key])))];
    const stored = keys.length > 0 ? await state.lookup(scope, kind, keys) : new Map<string, StoredItem>();
    await this.#pacer.pace();
    const marks = this.#judge(reads, stored);
    const { repeats } = this.#plan;
    if (repeats.kind === 'state') await state.markSeen(scope, kind, repeats.seq, marks);
    this.#plan.onWindow();
    await this.#pacer.pace();
  }

  /** Reads an item once into its plain copy (what is checked, hashed and sent) and its repeat key. */
  #copy(index: number, item: unknown): Read {
    const checked = plainCopy(item);
    const judged = checked.ok ? checked.value : item;
    const unreadable = !checked.ok && checked.unreadable === true;
    let key: string | undefined;
    try {
      key = unreadable ? undefined : this.#plan.rules.repeatKey(judged);
    } catch {
      return { index, item, checked, judged, key: undefined, unreadable: true };
    }
    return { index, item, checked, judged, key, unreadable };
  }

  /** As the bulk writes judge an item (repeat first, then the route's checks), then changed or not. */
  #judge(reads: Read[], stored: Map<string, StoredItem>): SeenMark[] {
    const { rules, resend, kind } = this.#plan;
    const claimedHere = new Map<string, number>();
    const marks: SeenMark[] = [];
    for (const read of reads) {
      const { index, judged, checked, key } = read;
      let problem: string | undefined;
      if (read.unreadable) {
        problem = checked.ok ? UNREADABLE_ITEM : checked.problem;
      } else {
        try {
          const firstIndex = key === undefined ? -1 : this.#claim(key, index, stored, claimedHere, marks, judged);
          problem = (firstIndex === -1 ? undefined : rules.repeatMessage(judged, firstIndex)) ?? rules.problem(judged) ?? (checked.ok ? undefined : checked.problem);
        } catch {
          problem = UNREADABLE_ITEM;
        }
      }
      if (problem !== undefined) {
        this.rejected += 1;
        this.#plan.onRejected(this.#rejectedResult(index, judged, problem));
        continue;
      }
      const fingerprint = fingerprintOf(kind, judged);
      const before = stored.get(key!);
      const changed =
        resend.full ||
        resend.maxAgeMs === 0 ||
        before?.fingerprint == null ||
        before.fingerprint !== fingerprint ||
        // Sent before without an answer saying what became of it: what the service holds is unknown.
        before.inFlight ||
        (resend.maxAgeMs !== Infinity && resend.now - (before.sentAt ?? 0) > resend.maxAgeMs);
      if (!changed) {
        this.unchanged += 1;
        continue;
      }
      if (this.#plan.repeats.kind === 'state') {
        // Its seen mark travels with its batch (see #unwritten).
        // It was claimed just now, so its mark is the last one pushed.
        if (marks.at(-1)?.index === index) marks.pop();
        this.#unwritten.set(key!, index);
      }
      // Sent through the client's bulk write, which would copy it again: it is that copy already.
      markCheckedCopy(judged);
      const ids = idsOf(judged);
      const { storeIdsOf, pairsOf } = this.#plan;
      this.#buffer.push({ index, key: key!, externalId: ids.externalId, storeId: ids.storeId, item: judged, fingerprint, storeIds: storeIdsOf(judged), pairs: pairsOf(judged) });
    }
    return marks;
  }

  /** The first index of `key` in this run, or -1 after claiming it now. */
  #claim(key: string, index: number, stored: Map<string, StoredItem>, claimedHere: Map<string, number>, marks: SeenMark[], item: unknown): number {
    const { repeats } = this.#plan;
    if (repeats.kind === 'memory') return repeats.seen.claim(key, index);
    const here = claimedHere.get(key) ?? this.#unwritten.get(key);
    if (here !== undefined) return here;
    const before = stored.get(key);
    if (before?.seenSeq === repeats.seq && before.seenIndex !== null) return before.seenIndex;
    claimedHere.set(key, index);
    const ids = idsOf(item);
    marks.push({ key, externalId: ids.externalId, storeId: ids.storeId, index });
    return -1;
  }

  #rejectedResult(index: number, item: unknown, problem: string): Result {
    try {
      return this.#plan.rules.rejected(index, item, problem);
    } catch {
      return this.#plan.rules.rejected(index, {}, problem);
    }
  }
}

function idsOf(item: unknown): { externalId: string; storeId: string } {
  const record = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  return {
    externalId: typeof record.external_id === 'string' ? record.external_id : '',
    storeId: typeof record.store_id === 'string' ? record.store_id : '',
  };
}
