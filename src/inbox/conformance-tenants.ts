// The parts of the InboxStore conformance suite for many merchants (issue 28): entries, orders,
// claims, copies across two secrets and reconcile records, each per tenant.
import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import { entry, LEASE, T0, WAIT } from './conformance-entries.ts';
import type { InboxStore, NewInboxEntry } from './store.ts';

/** An order event of `orderId` with `data.status` (and `previous_status` for a change): what the order's state reads. */
function orderEvent(orderId: string, event: string, data: Record<string, string>, overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  return entry({ orderId, event, payload: JSON.stringify({ event, data: { order_id: orderId, ...data } }), ...overrides });
}

/** An order.created of `orderId`, status `confirmed`. */
const created = (orderId: string, overrides: Partial<NewInboxEntry> = {}) => orderEvent(orderId, 'order.created', { status: 'confirmed' }, overrides);

/** An order.status_changed from `previous` to `status`, verified by the secret `verifiedBy`. */
function change(orderId: string, previous: string, status: string, overrides: Partial<NewInboxEntry> = {}): NewInboxEntry {
  return orderEvent(orderId, 'order.status_changed', { previous_status: previous, status }, overrides);
}

export function tenantsConformance(current: () => InboxStore, test: ConformanceTestApi): void {
  const { describe, it, expect } = test;
  describe('many merchants (tenants)', () => {
    let store: InboxStore;
    test.beforeEach(async () => {
      store = current();
    });
    const claim = (workerId: string, now = T0, limit = 10, afterTenant?: string) => store.claim({ workerId, now, leaseMs: LEASE, limit, orderWaitMs: WAIT, afterTenant });

    it('keeps the same delivery id under two tenants as two entries, and reads, retries and purges one tenant at a time', async () => {
      const a = created('order-ab', { tenant: 'loja-a' });
      const b = { ...a, tenant: 'loja-b', payload: JSON.stringify({ event: 'order.created', data: { order_id: 'order-ab', status: 'pending' } }) };
      const single = entry();
      expect(await store.insert(a)).toBe('stored');
      expect(await store.insert(b)).toBe('stored');
      expect(await store.insert(single)).toBe('stored');
      expect(await store.insert({ ...b, event: 'stock.changed' })).toBe('duplicate');
      expect(await store.get(a.deliveryId, 'loja-a')).toMatchObject({ id: a.deliveryId, tenant: 'loja-a', payload: a.payload });
      expect(await store.get(a.deliveryId, 'loja-b')).toMatchObject({ tenant: 'loja-b', payload: b.payload });
      expect(await store.get(a.deliveryId, 'loja-c')).toBeUndefined();
      expect(await store.get(single.deliveryId)).toMatchObject({ tenant: null });
      expect((await store.stats(T0)).received).toBe(3);
      expect(await store.stats(T0, { tenant: 'loja-a' })).toMatchObject({ received: 1, pending: 1 });
      expect((await store.list({ limit: 10, tenant: 'loja-b' })).map((each) => [each.id, each.tenant])).toEqual([[a.deliveryId, 'loja-b']]);

      const claimed = await claim('w', T0, 10);
      expect(claimed.map((each) => each.tenant ?? '(none)').sort()).toEqual(['(none)', 'loja-a', 'loja-b']);
      // The worker finishes each entry of its tenant: the other tenant's entry of the same id stays its own.
      expect(await store.fail(a.deliveryId, { workerId: 'w', tenant: 'loja-a', error: 'Error: no', now: T0, nextAttemptAt: null })).toBe(true);
      expect(await store.complete(a.deliveryId, 'w', T0, 'loja-b')).toBe(true);
      expect(await store.complete(single.deliveryId, 'w', T0, '')).toBe(true);
      expect(await store.get(a.deliveryId, 'loja-a')).toMatchObject({ status: 'dead' });
      expect(await store.get(a.deliveryId, 'loja-b')).toMatchObject({ status: 'done' });
      expect(await store.stats(T0, { tenant: 'loja-b' })).toMatchObject({ received: 1, done: 1, dead: 0 });

      expect(await store.retryDead(T0 + 1, { tenant: 'loja-b' })).toBe(0);
      expect(await store.retryDead(T0 + 1, { tenant: 'loja-a' })).toBe(1);
      expect(await store.retry(a.deliveryId, T0 + 2, 'loja-b')).toBe(true);
      expect(await store.get(a.deliveryId, 'loja-a')).toMatchObject({ status: 'pending' });
      await claim('w', T0 + 3);
      await store.complete(a.deliveryId, 'w', T0 + 3, 'loja-a');
      await store.complete(a.deliveryId, 'w', T0 + 3, 'loja-b');
      expect(await store.purge({ status: 'done', finishedBefore: T0 + 10, what: 'entry', tenant: 'loja-a' })).toBe(1);
      expect(await store.get(a.deliveryId, 'loja-a')).toBeUndefined();
      expect(await store.get(a.deliveryId, 'loja-b')).toMatchObject({ tenant: 'loja-b' });
      expect(await store.get(single.deliveryId)).toMatchObject({ tenant: null });
      if (store.page) expect((await store.page({ limit: 10, tenant: 'loja-b' })).map((each) => each.tenant)).toEqual(['loja-b']);
      if (store.has) expect([...(await store.has([a.deliveryId, single.deliveryId], 'loja-b'))]).toEqual([a.deliveryId]);
    });

    it('keeps the same order id under two tenants as two orders: each runs its own events one at a time, in parallel with the other', async () => {
      const createdA = created('order-shared', { tenant: 'loja-a', ts: 100 });
      const changeA = change('order-shared', 'confirmed', 'preparing', { tenant: 'loja-a', ts: 200 });
      const createdB = created('order-shared', { tenant: 'loja-b', ts: 100 });
      for (const each of [changeA, createdA, createdB]) await store.insert(each);
      const first = await claim('w', T0);
      expect(first.map((each) => [each.tenant, each.event]).sort()).toEqual([
        ['loja-a', 'order.created'],
        ['loja-b', 'order.created'],
      ]);
      expect(await store.orderCreatedPayload('order-shared', 'loja-b')).toBe(createdB.payload);
      expect(await store.orderCreatedPayload('order-shared')).toBeNull();
      // loja-b's order.created being done does not let loja-a's change run before loja-a's own.
      await store.complete(createdB.deliveryId, 'w', T0, 'loja-b');
      expect(await claim('w', T0 + 1)).toEqual([]);
      await store.complete(createdA.deliveryId, 'w', T0, 'loja-a');
      expect((await claim('w', T0 + 2)).map((each) => each.id)).toEqual([changeA.deliveryId]);
      if (!store.staleOrders || !store.markChecked) return;
      const stale = (tenant?: string) => store.staleOrders!({ tenant, seenBefore: T0 + 10, checkedBefore: T0 + 10, finalStatuses: [], limit: 10 });
      expect(await stale('loja-a')).toMatchObject([{ orderId: 'order-shared', status: 'preparing' }]);
      expect(await stale('loja-b')).toMatchObject([{ orderId: 'order-shared', status: 'confirmed' }]);
      expect(await stale()).toEqual([]);
      await store.markChecked([{ orderId: 'order-shared' }], T0 + 5, 'loja-b');
      expect(await stale('loja-b')).toMatchObject([{ checkedAt: T0 + 5 }]);
      expect(await stale('loja-a')).toMatchObject([{ checkedAt: null }]);
    });

    it('claims each entry once, also when the tenant served last has nothing pending and one other tenant has', async () => {
      // A claim of 4 after 'loja-a', whose entries are all done, with one entry of 'loja-b' due: the
      // walk comes round to 'loja-b' again and must not take its entry a second time.
      const done = entry({ tenant: 'loja-a' });
      await store.insert(done);
      await claim('w', T0, 1);
      await store.complete(done.deliveryId, 'w', T0, 'loja-a');
      const due = entry({ tenant: 'loja-b' });
      await store.insert(due);
      const claimed = await claim('w', T0 + 1, 4, 'loja-a');
      expect(claimed.map((each) => [each.id, each.attempts])).toEqual([[due.deliveryId, 1]]);
      expect(await claim('w', T0 + 2, 4, 'loja-b')).toEqual([]);
    });

    it("claims due entries tenant by tenant in turn: a tenant's backlog does not delay another's new entry past one claim", async () => {
      for (let i = 0; i < 30; i += 1) await store.insert(entry({ tenant: 'busy', receivedAt: T0 + i }));
      const quiet = entry({ tenant: 'quiet', receivedAt: T0 + 100 });
      await store.insert(quiet);
      // Every busy entry is older, yet the quiet tenant's comes within the first claim of 2.
      const first = await claim('w', T0 + 200, 2);
      expect(first.map((each) => each.tenant)).toEqual(['busy', 'quiet']);
      // One at a time, each claim starts after the tenant served last (in the store's order of tenant ids), round once.
      await store.insert(entry({ tenant: 'quiet', receivedAt: T0 + 300 }));
      await store.insert(entry({ tenant: 'also', receivedAt: T0 + 301 }));
      const one = async (after: string) => (await claim('w', T0 + 400, 1, after)).map((each) => each.tenant);
      expect(await one('quiet')).toEqual(['also']);
      expect(await one('also')).toEqual(['busy']);
      expect(await one('busy')).toEqual(['quiet']);
      expect(await one('quiet')).toEqual(['busy']);
      expect(await one('busy')).toEqual(['busy']);
      // A tenant's entries not yet due are passed over; the single-merchant inbox is a tenant like any other.
      await store.insert(entry({ receivedAt: T0 + 500 }));
      const rest = await claim('w', T0 + 600, 4, 'busy');
      expect(rest.map((each) => each.tenant)).toEqual([null, 'busy', 'busy', 'busy']);
    });

    it('stores an order event verified by another secret as a copy of the first one (done, never run), whichever arrives first', async () => {
      const viaOld = created('o-copy', { tenant: 'loja-a', verifiedBy: 'ep-old' });
      const viaNew = created('o-copy', { tenant: 'loja-a', verifiedBy: 'ep-new', receivedAt: T0 + 5 });
      expect(await store.insert(viaOld)).toBe('stored');
      // 'stored' or 'duplicate' (a store may learn that it is a copy only after writing it): done either way.
      expect(['stored', 'duplicate'].includes(await store.insert(viaNew))).toBe(true);
      expect(await store.get(viaOld.deliveryId)).toMatchObject({ status: 'pending', verifiedBy: 'ep-old', copyOf: null });
      expect(await store.get(viaNew.deliveryId)).toMatchObject({ status: 'done', verifiedBy: 'ep-new', copyOf: viaOld.deliveryId, finishedAt: T0 + 5, attempts: 0 });
      // Status changes pair by previous and new status; the new secret's may come first.
      const newFirst = change('o-copy', 'confirmed', 'preparing', { tenant: 'loja-a', verifiedBy: 'ep-new', receivedAt: T0 + 10 });
      const other = change('o-copy', 'preparing', 'dispatched', { tenant: 'loja-a', verifiedBy: 'ep-old', receivedAt: T0 + 11 });
      const oldSecond = change('o-copy', 'confirmed', 'preparing', { tenant: 'loja-a', verifiedBy: 'ep-old', receivedAt: T0 + 12 });
      for (const each of [newFirst, other, oldSecond]) await store.insert(each);
      expect(await store.get(newFirst.deliveryId)).toMatchObject({ status: 'pending', copyOf: null });
      expect(await store.get(other.deliveryId)).toMatchObject({ status: 'pending', copyOf: null });
      expect(await store.get(oldSecond.deliveryId)).toMatchObject({ status: 'done', copyOf: newFirst.deliveryId });
      // A copy tells the order nothing new.
      if (store.staleOrders) {
        const [state] = await store.staleOrders({ tenant: 'loja-a', seenBefore: T0 + 100, checkedBefore: T0 + 100, finalStatuses: [], limit: 10 });
        expect(state).toMatchObject({ status: 'dispatched', version: 3 });
      }
      const runs: string[] = [];
      for (let round = 0; round < 5; round += 1) {
        for (const claimed of await claim('w', T0 + 1000)) {
          runs.push(claimed.id);
          await store.complete(claimed.id, 'w', T0 + 1000, claimed.tenant);
        }
      }
      expect(runs.sort()).toEqual([viaOld.deliveryId, newFirst.deliveryId, other.deliveryId].sort());
      if (store.page) expect((await store.page({ limit: 10, tenant: 'loja-a' })).filter((each) => each.copyOf !== null).map((each) => each.id).sort()).toEqual([viaNew.deliveryId, oldSecond.deliveryId].sort());
    });

    it('never pairs events of one secret (a repeated transition runs twice), of two tenants, or older than pairAfter', async () => {
      const first = change('o-rep', 'confirmed', 'preparing', { tenant: 'loja-a', verifiedBy: 'ep-1' });
      const again = change('o-rep', 'confirmed', 'preparing', { tenant: 'loja-a', verifiedBy: 'ep-1', receivedAt: T0 + 1 });
      const otherTenant = change('o-rep', 'confirmed', 'preparing', { tenant: 'loja-b', verifiedBy: 'ep-2', receivedAt: T0 + 2 });
      const tooOld = change('o-rep', 'confirmed', 'preparing', { tenant: 'loja-a', verifiedBy: 'ep-2', receivedAt: T0 + 3, pairAfter: T0 + 2 });
      const noSecret = change('o-rep', 'confirmed', 'preparing', { tenant: 'loja-a', receivedAt: T0 + 4 });
      for (const each of [first, again, otherTenant, tooOld, noSecret]) await store.insert(each);
      for (const each of [first, again, otherTenant, tooOld]) expect(await store.get(each.deliveryId, each.tenant)).toMatchObject({ status: 'pending', copyOf: null });
      // A single-merchant inbox given two secrets pairs the same way.
      const a = created('o-single', { verifiedBy: 'sha256:aaa' });
      const b = created('o-single', { verifiedBy: 'sha256:bbb', receivedAt: T0 + 1 });
      await store.insert(a);
      await store.insert(b);
      expect(await store.get(b.deliveryId)).toMatchObject({ tenant: null, status: 'done', copyOf: a.deliveryId });
    });

    it('pairs copies inserted at the same time: one of each pair runs', async () => {
      const pairs = Array.from({ length: 8 }, (_, n) => {
        const viaOld = change(`o-race-${n}`, 'confirmed', 'preparing', { tenant: 'loja-r', verifiedBy: 'ep-old' });
        return [viaOld, { ...viaOld, deliveryId: `${viaOld.deliveryId}-new`, verifiedBy: 'ep-new' }] as const;
      });
      await Promise.all(pairs.flat().map((each) => store.insert(each)));
      for (const [viaOld, viaNew] of pairs) {
        const states = [await store.get(viaOld.deliveryId, 'loja-r'), await store.get(viaNew.deliveryId, 'loja-r')];
        expect(states.filter((each) => each?.copyOf === null)).toHaveLength(1);
        expect(states.filter((each) => each?.status === 'done' && each.copyOf !== null)).toHaveLength(1);
      }
    });

    it("keeps each tenant's misses and last reconcile apart", async () => {
      if (!store.recordMissed || !store.listMissed || !store.endMissed || !store.saveReconcile || !store.lastReconcile || !store.reconciledAt) return;
      const missed = { deliveryId: 'd-t1', event: 'order.status_changed', status: 'dead', endpointId: 'ep-a', lastError: null, createdAt: '2026-11-21T12:00:00.000Z', attemptCount: 6, givesUpAt: null };
      await store.recordMissed([missed], T0, 'loja-a');
      await store.recordMissed([{ ...missed, deliveryId: 'd-t2', endpointId: 'ep-b' }], T0, 'loja-b');
      await store.recordMissed([{ ...missed, deliveryId: 'd-t3' }], T0);
      expect((await store.listMissed({ open: true, limit: 10, tenant: 'loja-a' })).map((each) => [each.deliveryId, each.tenant])).toEqual([['d-t1', 'loja-a']]);
      expect((await store.listMissed({ open: true, limit: 10 })).map((each) => each.deliveryId).sort()).toEqual(['d-t1', 'd-t2', 'd-t3']);
      expect(await store.endMissed({ deliveryIds: 'all', how: 'acknowledged', at: T0 + 1, by: 'ops', tenant: 'loja-b' })).toEqual(['d-t2']);
      expect((await store.listMissed({ open: true, limit: 10 })).map((each) => each.deliveryId).sort()).toEqual(['d-t1', 'd-t3']);
      await store.saveReconcile({ tenant: 'loja-a', ranAt: T0 + 5, missed: [missed], endpointIds: ['ep-a'] });
      await store.saveReconcile({ ranAt: T0 + 6, missed: [] });
      expect(await store.lastReconcile('loja-a')).toEqual({ tenant: 'loja-a', ranAt: T0 + 5, missed: [missed], endpointIds: ['ep-a'] });
      expect(await store.lastReconcile('loja-b')).toBeUndefined();
      expect(await store.lastReconcile()).toMatchObject({ ranAt: T0 + 6 });
      expect([...(await store.reconciledAt(['loja-a', 'loja-b']))]).toEqual([['loja-a', T0 + 5]]);
    });
  });
}
