import type { OpenEnum } from '../schemas/open-enum.ts';

/** Where an entry is in its life: received (`pending`), claimed by a worker, handled, or given up on. */
export type InboxStatus = 'pending' | 'processing' | 'done' | 'dead';

/** A verified delivery, as the receiver hands it to the store. */
export interface NewDelivery {
  deliveryId: string;
  event: string;
  /** `data.order_id` of order events: events of one order are handled one at a time, in `ts` order. */
  orderId: string | null;
  /** The event's `ts` (epoch seconds): events of one order run in this order, then by arrival. */
  ts: number;
  /** The verified body, as received. Personal data: never logged or listed. */
  payload: string;
  /** Whether the SDK knows the event name (unknown ones are stored too). */
  known: boolean;
  receivedAt: number;
}

/** An entry claimed by a worker: everything its handler needs. */
export interface ClaimedEntry {
  deliveryId: string;
  event: string;
  orderId: string | null;
  payload: string;
  /** 1 on the first run. */
  attempt: number;
}

/** A listed entry: never its payload. */
export interface InboxEntry {
  deliveryId: string;
  event: OpenEnum<string>;
  status: InboxStatus;
  attempts: number;
  /** The last handler error's message (never the payload). */
  lastError: string | null;
  orderId: string | null;
  receivedAt: Date;
}

export interface InboxStats {
  received: number;
  pending: number;
  processing: number;
  done: number;
  dead: number;
  /** Age of the oldest pending entry, 0 when none. */
  oldestPendingAgeMs: number;
}

export interface ClaimOptions {
  now: number;
  workerId: string;
  leaseMs: number;
  limit: number;
  /** An order event waits this long for its order's `order.created` to arrive. */
  orderWaitMs: number;
}

/**
 * What the inbox needs from a database. The shipped stores (`sqliteStore`, `postgresStore`)
 * implement it; write your own for another database and run `inboxStoreConformance` against it.
 * Every method may reject: the receiver answers 503 and the worker retries later.
 */
export interface InboxStore {
  /** Stores a delivery in one durable transaction; a delivery id already stored changes nothing. */
  insert(delivery: NewDelivery): Promise<'stored' | 'duplicate'>;
  /**
   * Claims up to `limit` runnable entries for `leaseMs`: pending and due, or processing with an
   * expired lease; at most one per order, and only the earliest unfinished event of its order.
   * Increments `attempts`. Safe with several workers in several processes.
   */
  claim(options: ClaimOptions): Promise<ClaimedEntry[]>;
  /** Extends a lease this worker holds; `false` when it no longer holds it. */
  extendLease(deliveryId: string, workerId: string, until: number): Promise<boolean>;
  /** Marks a claimed entry done. */
  complete(deliveryId: string, workerId: string, now: number): Promise<void>;
  /** A failed run: back to pending at `nextAttemptAt`, or dead. `error` is a message, never a payload. */
  fail(deliveryId: string, workerId: string, outcome: { error: string; nextAttemptAt: number; dead: boolean }): Promise<void>;
  /** The payload of one entry, by delivery id (the only way a payload is read back). */
  payload(deliveryId: string): Promise<string | undefined>;
  /** The payload of the `order.created` entry of an order, if stored and not yet purged. */
  orderCreatedPayload(orderId: string): Promise<string | undefined>;
  stats(now: number): Promise<InboxStats>;
  entries(filter: { status?: InboxStatus; limit?: number }): Promise<InboxEntry[]>;
  /** A dead or done entry back to pending (attempts kept); `false` when unknown or when its payload was purged. */
  retry(deliveryId: string, now: number): Promise<boolean>;
  retryDead(now: number): Promise<number>;
  /** Deletes entries of `status` received before `before`; returns how many. */
  purge(status: InboxStatus, before: number): Promise<number>;
  /** Drops payloads of done entries finished before `payloadBefore`, and rows before `rowBefore`. */
  applyRetention(payloadBefore: number, rowBefore: number): Promise<void>;
  close(): Promise<void>;
}
