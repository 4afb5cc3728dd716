// The parts of the InboxStore conformance suite for "a status handled once" (docs/inbox.md) that
// come from review 2: late deliveries stamped with their retry's time, a reconcile cover the order
// went round, the same transition missed twice, and markChecked recording what the service said.
// Each is a short, fixed sequence of inserts, decided by the store alone.
import type { Clock } from '../clock.ts';
import type { Order } from '../schemas/order.ts';
import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import { entry, neverRuns, orderEntry, orderStateOf, reconciledChange, runToEnd, statusChange, T0 } from './conformance-entries.ts';
import { changeEntry } from './reconcile-entries.ts';
import type { InboxStore } from './store.ts';

/** What reconcile stores for `state` when the service says `status` (the entry reconcile itself makes). */
async function reconcileEntry(store: InboxStore, orderId: string, status: string, at: number) {
  const state = (await orderStateOf(store, orderId))!;
  const order = { order_id: orderId, display_number: '1001', external_order_id: null, store_id: 'store-1', status } as unknown as Order;
  const clock: Clock = { now: () => at, setTimeout: () => () => {} };
  return changeEntry(state, order, clock);
}

export function historyConformance(current: () => InboxStore, test: ConformanceTestApi): void {
  const { describe, it, expect } = test;
  describe('a status handled once: late deliveries, cycles, repeated misses', () => {
    let store: InboxStore;
    test.beforeEach(async () => {
      store = current();
    });

    it('keeps the order where a reconcile read it when a late delivery of an earlier change arrives with a later ts: a second reconcile stores nothing, and the status runs once', async () => {
      if (!store.staleOrders) return;
      // confirmed -> preparing -> dispatched -> delivered while every status delivery failed.
      await store.insert(orderEntry('o-l1', 'order.created', { status: 'confirmed' }, { ts: 100 }));
      const first = await reconcileEntry(store, 'o-l1', 'delivered', T0 + 1000);
      expect(await store.insert(first)).toBe('stored');
      // The retry of preparing -> dispatched, stamped with its attempt's time (later than the reconcile's).
      const late = statusChange('o-l1', 'preparing', 'dispatched', { ts: 1_900_000_000, receivedAt: T0 + 2000 });
      expect(await store.insert(late)).toBe('stored');
      expect(await orderStateOf(store, 'o-l1')).toMatchObject({ status: 'delivered' });
      // Whatever state a second reconcile starts from, delivered is not stored to run again.
      const second = reconciledChange('o-l1', 'dispatched', 'delivered', (await orderStateOf(store, 'o-l1'))!.version);
      expect(await store.insert(second)).toBe('duplicate');
      const lateOwn = statusChange('o-l1', 'dispatched', 'delivered', { ts: 1_900_000_001, receivedAt: T0 + 3000 });
      const lateFirst = statusChange('o-l1', 'confirmed', 'preparing', { ts: 1_900_000_002, receivedAt: T0 + 4000 });
      await store.insert(lateOwn);
      await store.insert(lateFirst);
      expect(await orderStateOf(store, 'o-l1')).toMatchObject({ status: 'delivered' });
      const ran = await runToEnd(store);
      expect([first, late, second, lateOwn, lateFirst].map((each) => ran.includes(each.deliveryId))).toEqual([true, true, false, false, true]);
      expect(await neverRuns(store, lateOwn.deliveryId)).toBe(true);
    });

    it('runs a status once when a real delivery skips a status whose delivery died, after a reconcile: a second reconcile finds it there', async () => {
      if (!store.staleOrders) return;
      // Reconcile read preparing; preparing -> dispatched then died, and dispatched -> delivered arrives.
      await store.insert(orderEntry('o-sk', 'order.created', { status: 'confirmed' }, { ts: 100 }));
      const first = reconciledChange('o-sk', 'confirmed', 'preparing', 1);
      expect(await store.insert(first)).toBe('stored');
      const skipping = statusChange('o-sk', 'dispatched', 'delivered', { receivedAt: T0 + 5 });
      expect(await store.insert(skipping)).toBe('stored');
      // The next reconcile reads delivered: whatever state it starts from, delivered does not run again.
      const second = reconciledChange('o-sk', (await orderStateOf(store, 'o-sk'))!.status!, 'delivered', (await orderStateOf(store, 'o-sk'))!.version, { deliveryId: '00000000-0000-4000-8000-00000000a5a5' });
      await store.insert(second);
      expect(await orderStateOf(store, 'o-sk')).toMatchObject({ status: 'delivered' });
      const ran = await runToEnd(store);
      expect([first, skipping, second].map((each) => ran.includes(each.deliveryId))).toEqual([true, true, false]);
    });

    it('runs a real return to a status a reconcile brought, through a cycle of any length', async () => {
      if (!store.staleOrders) return;
      // confirmed -> preparing died and was reconciled; the order then really went round and came back.
      await store.insert(orderEntry('o-cy', 'order.created', { status: 'confirmed' }, { ts: 100 }));
      expect(await store.insert(reconciledChange('o-cy', 'confirmed', 'preparing', 1))).toBe('stored');
      const round = [
        statusChange('o-cy', 'preparing', 'dispatched', { receivedAt: T0 + 1 }),
        statusChange('o-cy', 'dispatched', 'confirmed', { receivedAt: T0 + 2 }),
        statusChange('o-cy', 'confirmed', 'preparing', { receivedAt: T0 + 3 }),
      ];
      for (const each of round) expect(await store.insert(each)).toBe('stored');
      for (const each of round) expect(await store.get(each.deliveryId)).toMatchObject({ status: 'pending' });
      expect(await orderStateOf(store, 'o-cy')).toMatchObject({ status: 'preparing' });
      // The cover still holds for the change it stands for: its own late delivery, while the order is past it.
      await store.insert(orderEntry('o-cy2', 'order.created', { status: 'confirmed' }, { ts: 100 }));
      await store.insert(reconciledChange('o-cy2', 'confirmed', 'preparing', 1));
      await store.insert(statusChange('o-cy2', 'preparing', 'dispatched', { receivedAt: T0 + 1 }));
      await store.insert(statusChange('o-cy2', 'dispatched', 'delivered', { receivedAt: T0 + 2 }));
      const own = statusChange('o-cy2', 'confirmed', 'preparing', { receivedAt: T0 + 3 });
      await store.insert(own);
      expect(await neverRuns(store, own.deliveryId)).toBe(true);
      expect(await orderStateOf(store, 'o-cy2')).toMatchObject({ status: 'delivered' });
    });

    it('stores a second miss of the same transition, after the order really went back, as a change of its own that runs', async () => {
      if (!store.staleOrders) return;
      await store.insert(orderEntry('o-rm', 'order.created', { status: 'confirmed' }, { ts: 100 }));
      // confirmed -> preparing missed: reconcile brings it.
      const first = await reconcileEntry(store, 'o-rm', 'preparing', T0 + 1000);
      expect(await store.insert(first)).toBe('stored');
      const back = statusChange('o-rm', 'preparing', 'confirmed', { receivedAt: T0 + 2000 });
      expect(await store.insert(back)).toBe('stored');
      // confirmed -> preparing missed again: reconcile brings it again, under another id.
      const again = await reconcileEntry(store, 'o-rm', 'preparing', T0 + 3000);
      expect(again.deliveryId).not.toBe(first.deliveryId);
      expect(await store.insert(again)).toBe('stored');
      expect(await orderStateOf(store, 'o-rm')).toMatchObject({ status: 'preparing' });
      // Two reconciles reading the same state make the same entry: stored once.
      const same = await reconcileEntry(store, 'o-rm', 'dispatched', T0 + 4000);
      expect(same.deliveryId).toBe((await reconcileEntry(store, 'o-rm', 'dispatched', T0 + 5000)).deliveryId);
      const ran = await runToEnd(store);
      expect([first, back, again].map((each) => ran.includes(each.deliveryId))).toEqual([true, true, true]);
    });

    it('records the status a reconcile read when nothing was stored for the order since the state it read', async () => {
      if (!store.staleOrders || !store.markChecked) return;
      await store.insert(orderEntry('o-mc', 'order.created', { status: 'confirmed' }, { ts: 100 }));
      await store.insert(statusChange('o-mc', 'confirmed', 'preparing', { receivedAt: T0 + 1 }));
      await store.insert(statusChange('o-mc', 'preparing', 'confirmed', { receivedAt: T0 + 2 }));
      const read = (await orderStateOf(store, 'o-mc'))!;
      expect(read).toMatchObject({ status: 'confirmed', version: 3 });
      await store.markChecked([{ orderId: 'o-mc', status: 'dispatched', version: read.version! }], T0 + 100);
      expect(await orderStateOf(store, 'o-mc')).toMatchObject({ status: 'dispatched', checkedAt: T0 + 100, version: 3 });
      // The order left confirmed when the service said dispatched: a later return to it is a change that runs.
      const back = reconciledChange('o-mc', 'dispatched', 'confirmed', 3);
      expect(await store.insert(back)).toBe('stored');
      expect(await orderStateOf(store, 'o-mc')).toMatchObject({ status: 'confirmed', version: 4 });
      // A status read before the order's latest event is not recorded over it.
      await store.markChecked([{ orderId: 'o-mc', status: 'cancelled', version: 3 }], T0 + 200);
      expect(await orderStateOf(store, 'o-mc')).toMatchObject({ status: 'confirmed', checkedAt: T0 + 200 });
      // Without a version, only a status the inbox never knew is filled.
      await store.markChecked([{ orderId: 'o-mc', status: 'cancelled' }], T0 + 300);
      expect(await orderStateOf(store, 'o-mc')).toMatchObject({ status: 'confirmed', checkedAt: T0 + 300 });
      const unknown = entry();
      await store.insert(unknown);
      await store.markChecked([{ orderId: unknown.orderId!, status: 'cancelled' }], T0 + 400);
      expect(await orderStateOf(store, unknown.orderId!)).toMatchObject({ status: 'cancelled' });
      expect((await runToEnd(store)).includes(back.deliveryId)).toBe(true);
    });
  });
}
