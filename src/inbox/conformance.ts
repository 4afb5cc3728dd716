import type { InboxStore, NewInboxEntry } from './store.ts';

interface Assertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toHaveLength(length: number): void;
  toBeUndefined(): void;
  not: Assertion;
}

/** The test functions the suite needs: pass vitest's (or jest's, node:test adapters) own. */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>): void;
  expect(value: unknown): Assertion;
  beforeEach(body: () => Promise<void>): void;
  afterEach(body: () => Promise<void>): void;
}

const T0 = 1_800_000_000_000;
const LEASE = 60_000;
const WAIT = 600_000;

let counter = 0;
function entry(overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  counter += 1;
  return {
    deliveryId: `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    event: 'order.created',
    orderId: `order-${counter}`,
    ts: 1_800_000_000,
    payload: JSON.stringify({ event: 'order.created', data: { order_id: `order-${counter}` } }),
    known: true,
    receivedAt: T0,
    ...overrides,
  };
}

/**
 * The behaviour every {@link InboxStore} must have, as a test suite. Run it in your own test file
 * with a factory that returns a fresh, empty store each time; the shipped SQLite and Postgres stores
 * run the same suite.
 *
 * @example
 * ```ts
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { inboxStoreConformance } from 'integration-sdk/inbox';
 *
 * inboxStoreConformance('my MySQL store', () => mysqlStore({ url, table: `inbox_${Date.now()}` }), {
 *   describe, it, expect, beforeEach, afterEach,
 * });
 * ```
 */
export function inboxStoreConformance(name: string, makeStore: () => InboxStore | Promise<InboxStore>, test: ConformanceTestApi): void {
  const { describe, it, expect, beforeEach, afterEach } = test;
  describe(`InboxStore conformance: ${name}`, () => {
    let store: InboxStore;
    beforeEach(async () => {
      store = await makeStore();
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
    });
    const claim = (workerId: string, now = T0, limit = 10) => store.claim({ workerId, now, leaseMs: LEASE, limit, orderWaitMs: WAIT });

    it('stores a delivery once: a second insert of its id is a duplicate and changes nothing', async () => {
      const first = entry();
      expect(await store.insert(first)).toBe('stored');
      expect(await store.insert({ ...first, payload: '{"changed":true}', event: 'stock.changed' })).toBe('duplicate');
      const stored = await store.get(first.deliveryId);
      expect(stored).toMatchObject({ id: first.deliveryId, event: 'order.created', payload: first.payload, status: 'pending', attempts: 0 });
      expect((await store.stats(T0)).received).toBe(1);
    });

    it('leases an entry to one worker until the lease expires, then to another, counting attempts', async () => {
      const first = entry();
      await store.insert(first);
      const [claimed] = await claim('a');
      expect(claimed).toMatchObject({ id: first.deliveryId, status: 'processing', attempts: 1, payload: first.payload });
      expect(await claim('b', T0 + LEASE - 1)).toHaveLength(0);
      expect(await store.extendLease(first.deliveryId, 'a', T0 + 2 * LEASE)).toBe(true);
      expect(await claim('b', T0 + LEASE + 1)).toHaveLength(0);
      const [taken] = await claim('b', T0 + 2 * LEASE);
      expect(taken).toMatchObject({ id: first.deliveryId, attempts: 2 });
      // The first worker lost it: it can neither extend nor finish it.
      expect(await store.extendLease(first.deliveryId, 'a', T0 + 3 * LEASE)).toBe(false);
      expect(await store.complete(first.deliveryId, 'a', T0 + 2 * LEASE)).toBe(false);
      expect(await store.complete(first.deliveryId, 'b', T0 + 2 * LEASE)).toBe(true);
      expect(await store.get(first.deliveryId)).toMatchObject({ status: 'done', finishedAt: T0 + 2 * LEASE });
    });

    it('never hands one entry to two claims running at the same time', async () => {
      for (let i = 0; i < 20; i += 1) await store.insert(entry());
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((worker) => claim(worker, T0, 8)));
      const ids = claims.flat().map((claimed) => claimed.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(20);
    });

    it('puts a failed run back at its next attempt time, or makes it dead', async () => {
      const first = entry();
      await store.insert(first);
      await claim('a');
      expect(await store.fail(first.deliveryId, { workerId: 'a', error: 'Error: ERP down', now: T0, nextAttemptAt: T0 + 1000 })).toBe(true);
      expect(await store.get(first.deliveryId)).toMatchObject({ status: 'pending', lastError: 'Error: ERP down', nextAttemptAt: T0 + 1000 });
      expect(await claim('a', T0 + 999)).toHaveLength(0);
      expect(await claim('a', T0 + 1000)).toHaveLength(1);
      expect(await store.fail(first.deliveryId, { workerId: 'a', error: 'Error: again', now: T0 + 1000, nextAttemptAt: null })).toBe(true);
      expect(await store.get(first.deliveryId)).toMatchObject({ status: 'dead', attempts: 2, lastError: 'Error: again' });
      expect(await claim('a', T0 + 10 * LEASE)).toHaveLength(0);
    });

    it('runs the events of one order one at a time, by ts then arrival; other orders in parallel', async () => {
      const later = entry({ orderId: 'order-x', event: 'order.status_changed', ts: 200 });
      const earlier = entry({ orderId: 'order-x', event: 'order.created', ts: 100, receivedAt: T0 + 1 });
      const other = entry({ orderId: 'order-y', event: 'order.created', ts: 300 });
      for (const each of [later, earlier, other]) await store.insert(each);
      const first = await claim('a', T0 + 1);
      expect(first.map((claimed) => claimed.id).sort()).toEqual([earlier.deliveryId, other.deliveryId].sort());
      expect(await claim('b', T0 + 2)).toHaveLength(0);
      await store.complete(earlier.deliveryId, 'a', T0 + 2);
      expect((await claim('b', T0 + 3)).map((claimed) => claimed.id)).toEqual([later.deliveryId]);
    });

    it("runs an order's order.created before its other events, even one with an earlier ts that arrived first", async () => {
      const change = entry({ orderId: 'order-z', event: 'order.status_changed', ts: 100 });
      const created = entry({ orderId: 'order-z', event: 'order.created', ts: 100 });
      await store.insert(change);
      await store.insert(created);
      expect((await claim('a')).map((claimed) => claimed.id)).toEqual([created.deliveryId]);
      await store.complete(created.deliveryId, 'a', T0);
      expect((await claim('a')).map((claimed) => claimed.id)).toEqual([change.deliveryId]);
    });

    it('keeps an order.status_changed waiting for its order.created up to orderWaitMs', async () => {
      const change = entry({ orderId: 'order-w', event: 'order.status_changed' });
      await store.insert(change);
      expect(await claim('a', T0 + WAIT - 1)).toHaveLength(0);
      expect((await claim('a', T0 + WAIT)).map((claimed) => claimed.id)).toEqual([change.deliveryId]);
    });

    it('runs an order.status_changed at once when its order.created is already done', async () => {
      const created = entry({ orderId: 'order-c', event: 'order.created', ts: 100 });
      await store.insert(created);
      await claim('a');
      await store.complete(created.deliveryId, 'a', T0);
      const change = entry({ orderId: 'order-c', event: 'order.status_changed', ts: 200 });
      await store.insert(change);
      expect((await claim('a', T0 + 1)).map((claimed) => claimed.id)).toEqual([change.deliveryId]);
      expect(await store.orderCreatedPayload('order-c')).toBe(created.payload);
      expect(await store.orderCreatedPayload('order-none')).toBe(null);
    });

    it('counts, lists without payloads, and retries done and dead entries', async () => {
      const [a, b, c] = [entry(), entry({ receivedAt: T0 + 1 }), entry({ receivedAt: T0 + 2 })];
      for (const each of [a, b, c]) await store.insert(each);
      await claim('w', T0 + 10, 2);
      await store.complete(a.deliveryId, 'w', T0 + 20);
      await store.fail(b.deliveryId, { workerId: 'w', error: 'Error: no', now: T0 + 20, nextAttemptAt: null });
      expect(await store.stats(T0 + 100)).toEqual({ received: 3, pending: 1, processing: 0, done: 1, dead: 1, oldestPendingAgeMs: 98 });
      const dead = await store.list({ status: 'dead', limit: 10 });
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ id: b.deliveryId, lastError: 'Error: no', attempts: 1 });
      expect('payload' in dead[0]!).toBe(false);
      const all = await store.list({ limit: 2 });
      expect(all.map((each) => each.id)).toEqual([a.deliveryId, b.deliveryId]);
      const rest = await store.list({ limit: 2, after: { receivedAt: all[1]!.receivedAt, id: all[1]!.id } });
      expect(rest.map((each) => each.id)).toEqual([c.deliveryId]);
      expect(await store.retry(c.deliveryId, T0 + 200)).toBe(false);
      expect(await store.retry(a.deliveryId, T0 + 200)).toBe(true);
      expect(await store.retryDead(T0 + 200)).toBe(1);
      expect(await store.get(b.deliveryId)).toMatchObject({ status: 'pending', attempts: 0, lastError: null, finishedAt: null });
      expect((await store.stats(T0 + 200)).pending).toBe(3);
    });

    it('purges payloads or whole finished entries older than a time', async () => {
      const [old, recent] = [entry(), entry()];
      for (const each of [old, recent]) await store.insert(each);
      await claim('w');
      await store.complete(old.deliveryId, 'w', T0 + 10);
      await store.complete(recent.deliveryId, 'w', T0 + 1000);
      expect(await store.purge({ status: 'done', finishedBefore: T0 + 500, what: 'payload' })).toBe(1);
      expect(await store.get(old.deliveryId)).toMatchObject({ status: 'done', payload: null });
      expect(await store.get(recent.deliveryId)).toMatchObject({ payload: recent.payload });
      // The id stays until the entry goes: a late retry of the delivery is still a duplicate.
      expect(await store.insert(old)).toBe('duplicate');
      expect(await store.purge({ status: 'dead', finishedBefore: T0 + 5000, what: 'entry' })).toBe(0);
      expect(await store.purge({ status: 'done', finishedBefore: T0 + 500, what: 'entry' })).toBe(1);
      expect(await store.get(old.deliveryId)).toBeUndefined();
    });

    dashboardQueriesConformance(() => store, test);
  });
}

const HOUR = 3_600_000;

/** The dashboard's queries (optional methods of InboxStore): checked on a store that has them. */
function dashboardQueriesConformance(current: () => InboxStore, test: ConformanceTestApi): void {
  const { describe, it, expect } = test;
  describe('the dashboard queries (optional methods)', () => {
    let store: InboxStore;
    test.beforeEach(async () => {
      store = current();
    });
    const order = (n: number, overrides: Partial<NewInboxEntry> = {}) => {
      const data = { order_id: `order-d${n}`, display_number: `10${n}`, external_order_id: n % 2 === 0 ? `MKT-${n}` : null };
      return entry({ orderId: data.order_id, payload: JSON.stringify({ event: 'order.created', data }), receivedAt: T0 + n * 1000, ...overrides });
    };

    it('pages newest first by keyset, filtered by status and event', async () => {
      if (!store.page) return;
      const entries = [1, 2, 3, 4, 5].map((n) => order(n, n === 3 ? { event: 'order.status_changed' } : {}));
      // Two entries received in the same millisecond: the delivery id breaks the tie.
      entries.push(order(6, { receivedAt: T0 + 5000 }));
      for (const each of entries) await store.insert(each);
      const expected = [...entries].sort((a, b) => b.receivedAt - a.receivedAt || (a.deliveryId < b.deliveryId ? 1 : -1)).map((each) => each.deliveryId);
      const first = await store.page({ limit: 4 });
      expect(first.map((each) => each.id)).toEqual(expected.slice(0, 4));
      expect('payload' in first[0]!).toBe(false);
      const last = first[3]!;
      const second = await store.page({ limit: 4, before: { receivedAt: last.receivedAt, id: last.id } });
      expect(second.map((each) => each.id)).toEqual(expected.slice(4));
      expect((await store.page({ limit: 10, event: 'order.status_changed' })).map((each) => each.id)).toEqual([entries[2]!.deliveryId]);
      const [claimed] = await store.claim({ workerId: 'w', now: T0 + 10_000, leaseMs: LEASE, limit: 1, orderWaitMs: WAIT });
      await store.fail(claimed!.id, { workerId: 'w', error: 'Error: no', now: T0 + 10_000, nextAttemptAt: null });
      expect((await store.page({ limit: 10, status: 'dead' })).map((each) => each.id)).toEqual([claimed!.id]);
      expect(await store.page({ limit: 10, status: 'dead', event: 'order.status_changed' })).toEqual([]);
      expect((await store.page({ limit: 10, orderId: 'order-d3' })).map((each) => each.id)).toEqual([entries[2]!.deliveryId]);
    });

    it('finds an entry by delivery id, order id, display number (with or without #) or external order id, after its payload is gone', async () => {
      if (!store.page) return;
      const [a, b] = [order(7), order(8)];
      await store.insert(a);
      await store.insert({ ...b, displayNumber: '108', externalOrderId: 'MKT-8' });
      await store.claim({ workerId: 'w', now: T0 + 10_000, leaseMs: LEASE, limit: 2, orderWaitMs: WAIT });
      await store.complete(a.deliveryId, 'w', T0 + 10_000);
      await store.purge({ status: 'done', finishedBefore: T0 + 20_000, what: 'payload' });
      const ids = async (search: string) => (await store.page!({ limit: 10, search })).map((each) => each.id);
      expect(await ids(a.deliveryId)).toEqual([a.deliveryId]);
      expect(await ids('order-d7')).toEqual([a.deliveryId]);
      expect(await ids('107')).toEqual([a.deliveryId]);
      expect(await ids('#107')).toEqual([a.deliveryId]);
      expect(await ids('MKT-8')).toEqual([b.deliveryId]);
      expect(await ids('nothing-like-it')).toEqual([]);
      const [found] = await store.page({ limit: 1, search: '108' });
      expect(found).toMatchObject({ id: b.deliveryId, displayNumber: '108', externalOrderId: 'MKT-8' });
    });

    it('counts received, done and dead entries per time bucket', async () => {
      if (!store.activity) return;
      const [a, b, c] = [entry({ receivedAt: T0 + 10 }), entry({ receivedAt: T0 + HOUR + 10 }), entry({ receivedAt: T0 + HOUR + 20 })];
      const old = entry({ receivedAt: T0 - HOUR });
      for (const each of [a, b, c, old]) await store.insert(each);
      await store.claim({ workerId: 'w', now: T0 + 2 * HOUR, leaseMs: LEASE, limit: 10, orderWaitMs: WAIT });
      await store.complete(a.deliveryId, 'w', T0 + 2 * HOUR + 5);
      await store.complete(b.deliveryId, 'w', T0 + 2 * HOUR + 6);
      await store.fail(c.deliveryId, { workerId: 'w', error: 'Error: no', now: T0 + HOUR + 30, nextAttemptAt: null });
      expect(await store.activity({ since: T0, until: T0 + 3 * HOUR, bucketMs: HOUR })).toEqual([
        { start: T0, received: 1, done: 0, dead: 0 },
        { start: T0 + HOUR, received: 2, done: 0, dead: 1 },
        { start: T0 + 2 * HOUR, received: 0, done: 2, dead: 0 },
      ]);
      expect(await store.activity({ since: T0 + HOUR, until: T0 + 2 * HOUR, bucketMs: HOUR })).toEqual([{ start: T0 + HOUR, received: 2, done: 0, dead: 1 }]);
    });

    it('tells which delivery ids it holds', async () => {
      if (!store.has) return;
      const [a, b] = [entry(), entry()];
      await store.insert(a);
      await store.insert(b);
      const found = await store.has([a.deliveryId, 'not-there', b.deliveryId]);
      expect([...found].sort()).toEqual([a.deliveryId, b.deliveryId].sort());
      expect((await store.has([])).size).toBe(0);
    });

    it("keeps the workers' last signs of life, and forgets a worker silent for a day", async () => {
      if (!store.heartbeat || !store.workers) return;
      await store.heartbeat({ workerId: 'a', now: T0, claimed: true });
      await store.heartbeat({ workerId: 'a', now: T0 + 10_000, claimed: false });
      await store.heartbeat({ workerId: 'b', now: T0 + 5000, claimed: false });
      expect(await store.workers()).toEqual([
        { workerId: 'a', seenAt: T0 + 10_000, claimedAt: T0 },
        { workerId: 'b', seenAt: T0 + 5000, claimedAt: null },
      ]);
      await store.heartbeat({ workerId: 'b', now: T0 + 86_400_000 + 20_000, claimed: false });
      expect((await store.workers()).map((worker) => worker.workerId)).toEqual(['b']);
    });

    it('records the action log and lists it newest first', async () => {
      if (!store.recordAction || !store.actions) return;
      await store.recordAction({ at: T0, actor: 'ops', action: 'retry', detail: 'delivery 1' });
      await store.recordAction({ at: T0 + 1, actor: 'token', action: 'purge', detail: '3 dead entries older than 7 days' });
      expect(await store.actions(10)).toEqual([
        { at: T0 + 1, actor: 'token', action: 'purge', detail: '3 dead entries older than 7 days' },
        { at: T0, actor: 'ops', action: 'retry', detail: 'delivery 1' },
      ]);
      expect(await store.actions(1)).toHaveLength(1);
    });
  });
}
