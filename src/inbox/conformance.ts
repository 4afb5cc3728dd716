import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import { entry, LEASE, T0, WAIT } from './conformance-entries.ts';
import { fairClaimConformance } from './conformance-claim.ts';
import { tenantsConformance } from './conformance-tenants.ts';
import { historyConformance } from './conformance-history.ts';
import { copiesConformance } from './conformance-copies.ts';
import type { InboxStore, NewInboxEntry } from './store.ts';

/** The test functions the suite needs (one definition, shared with the sync state's suite). */
export type { ConformanceTestApi };

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

    it('stores every delivery a real service may send: a fractional or huge ts, a NUL in order_id or payload, ids over 2.7 KB', async () => {
      const odd = [
        entry({ ts: 1_700_000_000.25 }),
        entry({ ts: 1e300 }),
        entry({ orderId: 'order-\u0000-nul', payload: '{"event":"order.created","data":{"order_id":"order-\\u0000-nul"}}' }),
        entry({ payload: 'not json \u0000 with a NUL byte' }),
        entry({ deliveryId: `long-${'d'.repeat(3000)}`, orderId: `long-${'o'.repeat(3000)}`, event: 'order.created' }),
        entry({ deliveryId: `long-${'d'.repeat(2999)}`, orderId: `long-${'o'.repeat(3000)}`, event: 'order.status_changed', ts: 1_800_000_001 }),
      ];
      for (const each of odd) expect(await store.insert(each)).toBe('stored');
      for (const each of odd) {
        expect(await store.insert(each)).toBe('duplicate');
        expect(await store.get(each.deliveryId)).toMatchObject({ id: each.deliveryId, orderId: each.orderId, ts: each.ts, payload: each.payload });
      }
      expect(await store.orderCreatedPayload('order-\u0000-nul')).toBe(odd[2]!.payload);
      // The long order's two events still run one at a time, order.created first.
      const claimed = await claim('a', T0, 10);
      expect(claimed.map((each) => each.id).sort()).toEqual(odd.slice(0, 5).map((each) => each.deliveryId).sort());
      expect(claimed.find((each) => each.id === odd[2]!.deliveryId)).toMatchObject({ orderId: 'order-\u0000-nul', payload: odd[2]!.payload });
      expect(await store.complete(odd[4]!.deliveryId, 'a', T0)).toBe(true);
      expect((await claim('a', T0 + 1, 10)).map((each) => each.id)).toEqual([odd[5]!.deliveryId]);
      expect((await store.list({ limit: 10 })).map((each) => each.id).sort()).toEqual(odd.map((each) => each.deliveryId).sort());
    });

    it('keeps the schema issues of a delivery, lists and counts them, and stores one as dead with its reason when asked', async () => {
      const marked = entry({ schemaIssues: ['data.customer.email', 'data.items.0.quantity'] });
      const dead = entry({ schemaIssues: ['data.metadata'], status: 'dead', lastError: 'invalid_payload: data.metadata', receivedAt: T0 + 1 });
      const plain = entry({ receivedAt: T0 + 2 });
      for (const each of [marked, dead, plain]) expect(await store.insert(each)).toBe('stored');
      expect(await store.get(marked.deliveryId)).toMatchObject({ status: 'pending', schemaIssues: ['data.customer.email', 'data.items.0.quantity'], lastError: null });
      expect(await store.get(dead.deliveryId)).toMatchObject({ status: 'dead', schemaIssues: ['data.metadata'], lastError: 'invalid_payload: data.metadata', finishedAt: T0 + 1, attempts: 0 });
      expect(await store.get(plain.deliveryId)).toMatchObject({ schemaIssues: null });
      expect((await store.list({ limit: 10 })).map((each) => each.schemaIssues)).toEqual([['data.customer.email', 'data.items.0.quantity'], ['data.metadata'], null]);
      expect(await store.stats(T0 + 10)).toMatchObject({ received: 3, pending: 2, dead: 1, invalidPayload: 2 });
      expect((await claim('w', T0 + 10)).map((each) => [each.id, each.schemaIssues])).toEqual([
        [marked.deliveryId, ['data.customer.email', 'data.items.0.quantity']],
        [plain.deliveryId, null],
      ]);
      // A retried dead entry keeps its mark: the handler is told.
      expect(await store.retry(dead.deliveryId, T0 + 20)).toBe(true);
      expect(await store.get(dead.deliveryId)).toMatchObject({ status: 'pending', schemaIssues: ['data.metadata'], lastError: null });
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
      expect(await store.stats(T0 + 100)).toEqual({ received: 3, pending: 1, processing: 0, done: 1, dead: 1, oldestPendingAgeMs: 98, invalidPayload: 0 });
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

    // Reconciliation: a store without its optional methods skips these (inbox.reconcile refuses it).
    const orderEvent = (orderId: string, event: string, status: string, overrides: Partial<NewInboxEntry> = {}) =>
      entry({ orderId, event, payload: JSON.stringify({ event, data: { order_id: orderId, status } }), ...overrides });
    const stateOf = async (orderId: string) =>
      (await store.staleOrders!({ seenBefore: Number.MAX_SAFE_INTEGER, checkedBefore: Number.MAX_SAFE_INTEGER, finalStatuses: [], limit: 1000 })).find((state) => state.orderId === orderId);

    it('keeps per order the status its changes lead to (by previous_status, never by ts), and when its last event arrived', async () => {
      if (!store.staleOrders) return;
      await store.insert(orderEvent('order-s', 'order.status_changed', 'dispatched', { ts: 200, receivedAt: T0, payload: JSON.stringify({ data: { order_id: 'order-s', previous_status: 'preparing', status: 'dispatched' } }) }));
      // An older change arriving later (its retry stamped later) does not win: the order left preparing already.
      await store.insert(orderEvent('order-s', 'order.status_changed', 'preparing', { ts: 900, receivedAt: T0 + 10, payload: JSON.stringify({ data: { order_id: 'order-s', previous_status: 'confirmed', status: 'preparing' } }) }));
      // An order.created's status counts only while none is known.
      await store.insert(orderEvent('order-s', 'order.created', 'confirmed', { ts: 300, receivedAt: T0 + 5 }));
      expect(await stateOf('order-s')).toMatchObject({ orderId: 'order-s', status: 'dispatched', statusTs: 200, lastEventAt: T0 + 10, checkedAt: null, hasCreated: true });
      // One that follows on from the order's status wins, whatever its ts.
      await store.insert(orderEvent('order-s', 'order.status_changed', 'delivered', { ts: 150, receivedAt: T0 + 20, payload: JSON.stringify({ data: { order_id: 'order-s', previous_status: 'dispatched', status: 'delivered' } }) }));
      expect(await stateOf('order-s')).toMatchObject({ status: 'delivered', statusTs: 150, lastEventAt: T0 + 20 });
      await store.insert(orderEvent('order-t', 'order.created', 'confirmed', { ts: 100 }));
      expect(await stateOf('order-t')).toMatchObject({ status: 'confirmed', hasCreated: true });
      // A duplicate delivery changes nothing.
      const again = orderEvent('order-t', 'order.status_changed', 'cancelled', { ts: 400 });
      await store.insert(again);
      expect(await store.insert({ ...again, payload: JSON.stringify({ data: { status: 'delivered' } }), ts: 500 })).toBe('duplicate');
      expect(await stateOf('order-t')).toMatchObject({ status: 'cancelled', statusTs: 400 });
    });

    it('orders two changes of one second by arrival, whichever was written first (concurrent receivers)', async () => {
      await store.insert(orderEvent('o-tie', 'order.created', 'confirmed', { ts: 100, receivedAt: T0 }));
      // Arrived second, written first: its receiver's transaction committed before the other's.
      const later = orderEvent('o-tie', 'order.status_changed', 'dispatched', { ts: 200, receivedAt: T0 + 57 });
      const earlier = orderEvent('o-tie', 'order.status_changed', 'preparing', { ts: 200, receivedAt: T0 + 1 });
      await store.insert(later);
      await store.insert(earlier);
      if (store.staleOrders) expect(await stateOf('o-tie')).toMatchObject({ status: 'dispatched', statusTs: 200 });
      const run = async () => {
        const [claimed] = await claim('w', T0 + 1000);
        await store.complete(claimed!.id, 'w', T0 + 1000);
        return claimed!.id;
      };
      await run(); // order.created
      expect(await run()).toBe(earlier.deliveryId);
      expect(await run()).toBe(later.deliveryId);
    });

    it('lists stale orders not final (or without order.created), least recently checked first, and records checks', async () => {
      if (!store.staleOrders || !store.markChecked) return;
      await store.insert(orderEvent('o-old', 'order.created', 'confirmed', { receivedAt: T0 }));
      await store.insert(orderEvent('o-new', 'order.created', 'confirmed', { receivedAt: T0 + 5000 }));
      await store.insert(orderEvent('o-final', 'order.created', 'delivered', { receivedAt: T0 }));
      await store.insert(orderEvent('o-nocreated', 'order.status_changed', 'cancelled', { receivedAt: T0 + 1 }));
      await store.insert(orderEvent('o-checked', 'order.created', 'confirmed', { receivedAt: T0 - 10 }));
      await store.markChecked([{ orderId: 'o-checked' }], T0 + 100);
      const request = { seenBefore: T0 + 1000, checkedBefore: T0 + 1000, finalStatuses: ['delivered', 'cancelled'], limit: 10 };
      expect((await store.staleOrders(request)).map((state) => state.orderId)).toEqual(['o-old', 'o-nocreated', 'o-checked']);
      expect((await store.staleOrders({ ...request, checkedBefore: T0 + 50 })).map((state) => state.orderId)).toEqual(['o-old', 'o-nocreated']);
      expect((await store.staleOrders({ ...request, limit: 1 })).map((state) => state.orderId)).toEqual(['o-old']);
      // At seenBefore itself counts as stale: staleAfterMinutes 0 reads every order heard of until now.
      expect((await store.staleOrders({ ...request, seenBefore: T0 + 5000 })).some((state) => state.orderId === 'o-new')).toBe(true);
      await store.markChecked([{ orderId: 'o-old', status: 'preparing' }], T0 + 200);
      // Checked now: after the ones checked earlier; a known status is not replaced by markChecked.
      expect((await store.staleOrders(request)).map((state) => state.orderId)).toEqual(['o-nocreated', 'o-checked', 'o-old']);
      expect(await stateOf('o-old')).toMatchObject({ status: 'confirmed', checkedAt: T0 + 200 });
    });

    it('stores a real delivery that a reconcile entry covers (same order, event and new status) as done, never run', async () => {
      if (!store.staleOrders) return;
      await store.insert(orderEvent('o-r', 'order.created', 'confirmed', { ts: 100 }));
      const reconciled = orderEvent('o-r', 'order.status_changed', 'dispatched', { ts: 500, source: 'reconcile' });
      expect(await store.insert(reconciled)).toBe('stored');
      expect(await stateOf('o-r')).toMatchObject({ status: 'dispatched', statusTs: 500 });
      const late = orderEvent('o-r', 'order.status_changed', 'dispatched', { ts: 900, receivedAt: T0 + 7 });
      // 'stored' or 'duplicate' (a store may only learn it covered the delivery after writing it): done either way.
      expect(['stored', 'duplicate'].includes(await store.insert(late))).toBe(true);
      expect(await store.get(late.deliveryId)).toMatchObject({ status: 'done', attempts: 0, finishedAt: T0 + 7 });
      // A covered delivery is still one the order had: the state takes it as any other.
      expect(await stateOf('o-r')).toMatchObject({ status: 'dispatched', statusTs: 900, lastEventAt: T0 + 7 });
      const other = orderEvent('o-r', 'order.status_changed', 'preparing', { ts: 300 });
      expect(await store.insert(other)).toBe('stored');
      expect(await store.get(other.deliveryId)).toMatchObject({ status: 'pending' });
      // The order.created a reconcile recovered covers the real one arriving late.
      expect(await store.insert(orderEvent('o-c', 'order.created', 'confirmed', { source: 'reconcile' }))).toBe('stored');
      const lateCreated = orderEvent('o-c', 'order.created', 'confirmed');
      expect(['stored', 'duplicate'].includes(await store.insert(lateCreated))).toBe(true);
      expect(await store.get(lateCreated.deliveryId)).toMatchObject({ status: 'done' });
      // Covered entries are done: only each order's first unfinished entry is claimable.
      const firstCreated = (await store.list({ limit: 100 })).find((each) => each.orderId === 'o-r' && each.event === 'order.created')!;
      const reconciledCreated = (await store.list({ limit: 100 })).find((each) => each.orderId === 'o-c' && each.status === 'pending')!;
      expect((await claim('w', T0 + 10)).map((each) => each.id).sort()).toEqual([firstCreated.id, reconciledCreated.id].sort());
    });

    // "A status handled once" (docs/inbox.md): decided in the insert transaction, in both directions.
    const change = (orderId: string, previous: string, status: string, overrides: Partial<NewInboxEntry> = {}) =>
      entry({ orderId, event: 'order.status_changed', ts: 300, payload: JSON.stringify({ event: 'order.status_changed', data: { order_id: orderId, previous_status: previous, status } }), ...overrides });
    const reconciled = (orderId: string, previous: string, status: string, orderVersion: number | undefined, overrides: Partial<NewInboxEntry> = {}) =>
      change(orderId, previous, status, { source: 'reconcile', ts: 200, ...(orderVersion === undefined ? {} : { orderVersion }), ...overrides });
    /** Runs the store's claims to the end: the entries a worker would run, in order. */
    const runAll = async () => {
      const ran: string[] = [];
      for (let round = 0; round < 50; round += 1) {
        const claimed = await claim('w', T0 + WAIT * 2, 100);
        if (claimed.length === 0) return ran;
        for (const each of claimed) {
          ran.push(each.id);
          await store.complete(each.id, 'w', T0 + WAIT * 2);
        }
      }
      return ran;
    };
    const isCovered = async (deliveryId: string) => (await store.get(deliveryId))?.status === 'done' && (await store.get(deliveryId))?.attempts === 0;

    it('stores a reconcile entry covered when a real delivery brought its status after the state it was made from was read', async () => {
      if (!store.staleOrders) return;
      const created = orderEvent('o-race', 'order.created', 'confirmed', { ts: 100 });
      await store.insert(created);
      const read = await stateOf('o-race');
      expect(read).toMatchObject({ status: 'confirmed', version: 1 });
      // The real delivery lands between reconcile's read and its insert.
      const real = change('o-race', 'confirmed', 'preparing');
      expect(await store.insert(real)).toBe('stored');
      const late = reconciled('o-race', 'confirmed', 'preparing', read!.version);
      expect(await store.insert(late)).toBe('duplicate');
      expect(await isCovered(late.deliveryId)).toBe(true);
      expect(await stateOf('o-race')).toMatchObject({ status: 'preparing', version: 3 });
      // The order moved on past it meanwhile: what reconcile read is already behind the order.
      await store.insert(orderEvent('o-past', 'order.created', 'confirmed', { ts: 100 }));
      const before = (await stateOf('o-past'))!.version;
      await store.insert(change('o-past', 'confirmed', 'preparing'));
      await store.insert(change('o-past', 'preparing', 'dispatched', { ts: 310 }));
      const behind = reconciled('o-past', 'confirmed', 'preparing', before);
      expect(await store.insert(behind)).toBe('duplicate');
      expect(await stateOf('o-past')).toMatchObject({ status: 'dispatched' });
      const ran = await runAll();
      expect([real, late, behind].map((each) => ran.includes(each.deliveryId))).toEqual([true, false, false]);
    });

    it('covers one real delivery per reconcile entry: a second real delivery of the status, or one after the order went on and came back, runs', async () => {
      if (!store.staleOrders) return;
      await store.insert(orderEvent('o-once', 'order.created', 'confirmed', { ts: 100 }));
      expect(await store.insert(reconciled('o-once', 'confirmed', 'dispatched', 1))).toBe('stored');
      const first = change('o-once', 'preparing', 'dispatched');
      const second = change('o-once', 'preparing', 'dispatched', { ts: 301 });
      await store.insert(first);
      await store.insert(second);
      expect(await isCovered(first.deliveryId)).toBe(true);
      expect(await store.get(second.deliveryId)).toMatchObject({ status: 'pending' });
      // preparing reconciled; the order went on to dispatched, then really came back to preparing.
      await store.insert(orderEvent('o-back', 'order.created', 'confirmed', { ts: 100 }));
      await store.insert(reconciled('o-back', 'confirmed', 'preparing', 1));
      const onwards = change('o-back', 'preparing', 'dispatched', { ts: 400 });
      const back = change('o-back', 'dispatched', 'preparing', { ts: 500 });
      await store.insert(onwards);
      await store.insert(back);
      expect(await store.get(onwards.deliveryId)).toMatchObject({ status: 'pending' });
      expect(await store.get(back.deliveryId)).toMatchObject({ status: 'pending' });
      expect(await stateOf('o-back')).toMatchObject({ status: 'preparing' });
      // The reconciled change's own late delivery, after a newer one went through: still covered.
      await store.insert(orderEvent('o-newer', 'order.created', 'confirmed', { ts: 100 }));
      await store.insert(reconciled('o-newer', 'confirmed', 'dispatched', 1));
      const newer = change('o-newer', 'dispatched', 'delivered', { ts: 400 });
      const lateOwn = change('o-newer', 'preparing', 'dispatched', { ts: 500 });
      await store.insert(newer);
      await store.insert(lateOwn);
      expect(await store.get(newer.deliveryId)).toMatchObject({ status: 'pending' });
      expect(await isCovered(lateOwn.deliveryId)).toBe(true);
      expect(await stateOf('o-newer')).toMatchObject({ status: 'delivered' });
    });

    it('keeps the order where the service has it when late real deliveries arrive after a reconcile, in either order, so a second reconcile finds nothing', async () => {
      if (!store.staleOrders) return;
      // confirmed -> (reconcile) dispatched; then the real preparing and dispatched arrive, stamped with their retry's time.
      for (const [orderId, arrival] of [['o-late-1', ['preparing', 'dispatched']], ['o-late-2', ['dispatched', 'preparing']]] as const) {
        await store.insert(orderEvent(orderId, 'order.created', 'confirmed', { ts: 100 }));
        await store.insert(reconciled(orderId, 'confirmed', 'dispatched', 1));
        const real = { preparing: change(orderId, 'confirmed', 'preparing', { ts: 400 }), dispatched: change(orderId, 'preparing', 'dispatched', { ts: 401 }) };
        for (const status of arrival) await store.insert(real[status]);
        expect({ orderId, preparing: (await store.get(real.preparing.deliveryId))?.status, dispatchedCovered: await isCovered(real.dispatched.deliveryId), state: (await stateOf(orderId))?.status })
          .toEqual({ orderId, preparing: 'pending', dispatchedCovered: true, state: 'dispatched' });
      }
      // A reconcile reading between the two late deliveries finds the order where the service has
      // it; one made from a state read before the late preparing repeats dispatched: covered.
      await store.insert(orderEvent('o-late-3', 'order.created', 'confirmed', { ts: 100 }));
      await store.insert(reconciled('o-late-3', 'confirmed', 'dispatched', 1));
      await store.insert(change('o-late-3', 'confirmed', 'preparing', { ts: 400 }));
      expect(await stateOf('o-late-3')).toMatchObject({ status: 'dispatched' });
      const again = reconciled('o-late-3', 'confirmed', 'dispatched', 1, { ts: 450 });
      expect(await store.insert(again)).toBe('duplicate');
      const lastReal = change('o-late-3', 'preparing', 'dispatched', { ts: 500 });
      await store.insert(lastReal);
      expect(await isCovered(lastReal.deliveryId)).toBe(true);
      const ran = await runAll();
      expect(ran.filter((id) => id === again.deliveryId || id === lastReal.deliveryId)).toEqual([]);
    });

    it('covers order.created the same way: a reconciled one after a real one arrived, and one real one after a reconciled one', async () => {
      if (!store.staleOrders) return;
      await store.insert(orderEvent('o-c1', 'order.status_changed', 'preparing'));
      await store.insert(orderEvent('o-c1', 'order.created', 'confirmed'));
      const recovered = orderEvent('o-c1', 'order.created', 'preparing', { source: 'reconcile' });
      expect(await store.insert(recovered)).toBe('duplicate');
      expect(await isCovered(recovered.deliveryId)).toBe(true);
      await store.insert(orderEvent('o-c2', 'order.status_changed', 'preparing'));
      expect(await store.insert(orderEvent('o-c2', 'order.created', 'preparing', { source: 'reconcile' }))).toBe('stored');
      const [real, another] = [orderEvent('o-c2', 'order.created', 'confirmed'), orderEvent('o-c2', 'order.created', 'confirmed')];
      await store.insert(real);
      await store.insert(another);
      expect(await isCovered(real.deliveryId)).toBe(true);
      expect(await store.get(another.deliveryId)).toMatchObject({ status: 'pending' });
    });

    const missed = { deliveryId: 'd-1', event: 'order.status_changed', status: 'dead', endpointId: 'w-1', lastError: 'receiver answered 503', createdAt: '2026-11-21T12:00:00.000Z', attemptCount: 6, givesUpAt: null };

    it('keeps the last reconcile', async () => {
      if (!store.saveReconcile || !store.lastReconcile) return;
      const held = entry();
      await store.insert(held);
      expect(await store.lastReconcile()).toBeUndefined();
      await store.saveReconcile({ ranAt: T0, missed: [missed] });
      await store.saveReconcile({ ranAt: T0 + 1, missed: [missed, { ...missed, deliveryId: 'd-2' }], endpointIds: ['w-1'] });
      expect(await store.lastReconcile()).toEqual({ ranAt: T0 + 1, missed: [missed, { ...missed, deliveryId: 'd-2' }], endpointIds: ['w-1'] });
    });

    it('keeps each missed delivery from the reconcile that found it until it ends, with how, when and by whom', async () => {
      if (!store.recordMissed || !store.listMissed || !store.endMissed) return;
      const retrying = { ...missed, deliveryId: 'd-2', status: 'retrying', attemptCount: 2, createdAt: '2026-11-21T11:00:00.000Z', givesUpAt: '2026-11-22T02:00:00.000Z' };
      const created = { ...missed, deliveryId: 'd-3', event: 'order.created', createdAt: '2026-11-21T13:00:00.000Z' };
      expect([...(await store.recordMissed([missed, retrying], T0))].sort()).toEqual(['d-1', 'd-2']);
      // Seen again: not new; the service's latest word on it is kept.
      expect(await store.recordMissed([{ ...retrying, attemptCount: 3 }, created], T0 + 10)).toEqual(['d-3']);
      expect(await store.listMissed({ open: true, limit: 10 })).toEqual([
        { ...retrying, attemptCount: 3, firstSeenAt: T0, ended: null },
        { ...missed, firstSeenAt: T0, ended: null },
        { ...created, firstSeenAt: T0 + 10, ended: null },
      ]);
      expect(await store.endMissed({ deliveryIds: ['d-1', 'nothing-like-it'], how: 'recovered', at: T0 + 20, by: null })).toEqual(['d-1']);
      expect(await store.endMissed({ deliveryIds: ['d-1'], how: 'acknowledged', at: T0 + 30, by: 'ops' })).toEqual([]);
      expect([...(await store.endMissed({ deliveryIds: 'all', how: 'acknowledged', at: T0 + 40, by: 'ops' }))].sort()).toEqual(['d-2', 'd-3']);
      expect(await store.listMissed({ open: true, limit: 10 })).toEqual([]);
      const ended = await store.listMissed({ open: false, limit: 10 });
      expect(ended.map((each) => [each.deliveryId, each.ended])).toEqual([
        ['d-2', { how: 'acknowledged', at: T0 + 40, by: 'ops' }],
        ['d-3', { how: 'acknowledged', at: T0 + 40, by: 'ops' }],
        ['d-1', { how: 'recovered', at: T0 + 20, by: null }],
      ]);
      expect(await store.listMissed({ open: false, limit: 1 })).toHaveLength(1);
      // An ended miss the delivery log still lists stays ended.
      expect(await store.recordMissed([missed], T0 + 50)).toEqual([]);
      expect(await store.listMissed({ open: true, limit: 10 })).toEqual([]);
    });

    dashboardQueriesConformance(() => store, test);
    tenantsConformance(() => store, test);
    fairClaimConformance(() => store, test);
    historyConformance(() => store, test);
    copiesConformance(() => store, test);
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

    it('states what a purge would delete, and keeps counting what it deleted per hour', async () => {
      if (!store.purgePreview || !store.activity) return;
      const [a, b, c, d] = [order(11, { receivedAt: T0 + 10 }), order(12, { receivedAt: T0 + 20 }), order(13, { receivedAt: T0 + 30 }), order(14, { receivedAt: T0 + HOUR + 40 })];
      for (const each of [a, b, c, d]) await store.insert(each);
      await store.claim({ workerId: 'w', now: T0 + 2 * HOUR, leaseMs: LEASE, limit: 10, orderWaitMs: WAIT });
      await store.fail(a.deliveryId, { workerId: 'w', error: 'Error: no', now: T0 + HOUR + 50, nextAttemptAt: null });
      await store.fail(b.deliveryId, { workerId: 'w', error: 'Error: no', now: T0 + HOUR + 60, nextAttemptAt: null });
      await store.fail(c.deliveryId, { workerId: 'w', error: 'Error: no', now: T0 + 3 * HOUR, nextAttemptAt: null });
      await store.complete(d.deliveryId, 'w', T0 + 2 * HOUR + 5);
      const week = { since: T0, until: T0 + 4 * HOUR, bucketMs: HOUR };
      const before = await store.activity(week);
      expect(before).toEqual([
        { start: T0, received: 3, done: 0, dead: 0 },
        { start: T0 + HOUR, received: 1, done: 0, dead: 2 },
        { start: T0 + 2 * HOUR, received: 0, done: 1, dead: 0 },
        { start: T0 + 3 * HOUR, received: 0, done: 0, dead: 1 },
      ]);
      const preview = await store.purgePreview({ status: 'dead', finishedBefore: T0 + 2 * HOUR, limit: 1 });
      expect(preview.count).toBe(2);
      expect(preview.entries).toHaveLength(1);
      expect(preview.entries[0]).toMatchObject({ id: a.deliveryId, status: 'dead', displayNumber: '1011', finishedAt: T0 + HOUR + 50 });
      // Two purges adding to the same hours, a third of done entries: the counts stay as they were.
      expect(await store.purge({ status: 'dead', finishedBefore: T0 + HOUR + 55, what: 'entry' })).toBe(1);
      expect(await store.purge({ status: 'dead', finishedBefore: T0 + 2 * HOUR, what: 'entry' })).toBe(1);
      expect(await store.purge({ status: 'done', finishedBefore: T0 + 4 * HOUR, what: 'entry' })).toBe(1);
      expect(await store.activity(week)).toEqual(before);
      expect(await store.activity({ since: T0 + HOUR, until: T0 + 2 * HOUR, bucketMs: HOUR })).toEqual([before[1]]);
      // Per day as well: one bucket of four hours.
      expect(await store.activity({ since: T0, until: T0 + 4 * HOUR, bucketMs: 4 * HOUR })).toEqual([{ start: T0, received: 4, done: 1, dead: 3 }]);
      expect(await store.purgePreview({ status: 'dead', finishedBefore: T0 + 2 * HOUR, limit: 10 })).toEqual({ count: 0, entries: [] });
      expect(await store.get(a.deliveryId)).toBeUndefined();
      expect((await store.stats(T0 + 4 * HOUR)).received).toBe(1);
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
