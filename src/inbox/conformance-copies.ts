// The parts of the InboxStore conformance suite for copies across two secrets (docs/inbox.md, "Two
// secrets") that come from review 2: only what can be a copy is paired. A delivery the older
// endpoint made before the newer one existed, and one the order's own later changes show to be an
// earlier occurrence, are nobody's copies: a real repeat of the transition runs.
import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import { orderEntry, runToEnd, statusChange, T0 } from './conformance-entries.ts';
import { pairAfterOf } from './copies.ts';
import type { InboxStore, NewInboxEntry } from './store.ts';

const SECOND = 1000;

export function copiesConformance(current: () => InboxStore, test: ConformanceTestApi): void {
  const { describe, it, expect } = test;
  describe('copies across two secrets: only what can be a copy', () => {
    let store: InboxStore;
    test.beforeEach(async () => {
      store = current();
    });
    const copyOf = async (each: NewInboxEntry) => (await store.get(each.deliveryId, each.tenant))?.copyOf ?? null;

    it("never takes the older endpoint's delivery from before the newer secret was stored as the copy of a later repeat (a tenant's rotation)", async () => {
      const tenant = 'loja-rot';
      // confirmed -> preparing through the old endpoint; then the rotation stores the new secret.
      const before = statusChange('o-rot', 'confirmed', 'preparing', { tenant, verifiedBy: 'ep-old', receivedAt: T0 });
      await store.insert(before);
      const storedAt = T0 + 6 * SECOND;
      const viaNew = (previous: string, status: string, receivedAt: number) =>
        statusChange('o-rot', previous, status, { tenant, verifiedBy: 'ep-new', receivedAt, pairAfter: pairAfterOf(storedAt, receivedAt) });
      // The order goes back while both endpoints deliver (a copy, paired), then through the same
      // change again once the old endpoint is gone: only the time tells the repeat from a copy.
      const backOld = statusChange('o-rot', 'preparing', 'confirmed', { tenant, verifiedBy: 'ep-old', receivedAt: T0 + 7 * SECOND });
      const backNew = viaNew('preparing', 'confirmed', T0 + 7 * SECOND + 50);
      const repeat = viaNew('confirmed', 'preparing', T0 + 8 * SECOND);
      for (const each of [backOld, backNew, repeat]) await store.insert(each);
      expect([await copyOf(backNew), await copyOf(repeat)]).toEqual([backOld.deliveryId, null]);
      expect((await runToEnd(store)).filter((id) => [before, backOld, backNew, repeat].some((each) => each.deliveryId === id))).toEqual([before, backOld, repeat].map((each) => each.deliveryId));
    });

    it("never takes a single merchant's delivery through one secret from before the other first verified one as a copy", async () => {
      // The old secret alone; the order goes confirmed -> preparing -> confirmed.
      const old = [statusChange('o-one', 'confirmed', 'preparing', { verifiedBy: 'sha256:old', receivedAt: T0 }), statusChange('o-one', 'preparing', 'confirmed', { verifiedBy: 'sha256:old', receivedAt: T0 + SECOND })];
      for (const each of old) await store.insert(each);
      // A minute later the new secret verifies its first delivery: the order's confirmed -> preparing again.
      const repeat = statusChange('o-one', 'confirmed', 'preparing', { verifiedBy: 'sha256:new', receivedAt: T0 + 60 * SECOND });
      await store.insert(repeat);
      expect(await copyOf(repeat)).toBeNull();
      // Both secrets deliver from then on: copies are paired as ever, whichever comes first.
      const viaNew = statusChange('o-one', 'preparing', 'dispatched', { verifiedBy: 'sha256:new', receivedAt: T0 + 61 * SECOND });
      const viaOld = statusChange('o-one', 'preparing', 'dispatched', { verifiedBy: 'sha256:old', receivedAt: T0 + 61 * SECOND + 300 });
      await store.insert(viaNew);
      await store.insert(viaOld);
      expect([await copyOf(viaNew), await copyOf(viaOld)]).toEqual([null, viaNew.deliveryId]);
      // A copy from just before the other secret's first delivery (the two endpoints answered in either order) is paired too.
      const early = orderEntry('o-two', 'order.created', { status: 'confirmed' }, { verifiedBy: 'sha256:old', receivedAt: T0 + 120 * SECOND });
      const firstOfThird = orderEntry('o-two', 'order.created', { status: 'confirmed' }, { verifiedBy: 'sha256:third', receivedAt: T0 + 121 * SECOND });
      await store.insert(early);
      await store.insert(firstOfThird);
      expect(await copyOf(firstOfThird)).toBe(early.deliveryId);
    });

    it('never pairs a delivery with one its own secret shows to be an earlier occurrence: the order left and came back through it alone', async () => {
      // Within the overlap in time, yet the order's changes through the new secret alone show a repeat.
      const first = statusChange('o-back', 'confirmed', 'preparing', { verifiedBy: 'sha256:a', receivedAt: T0 });
      const back = statusChange('o-back', 'preparing', 'confirmed', { verifiedBy: 'sha256:b', receivedAt: T0 + 100 });
      const repeat = statusChange('o-back', 'confirmed', 'preparing', { verifiedBy: 'sha256:b', receivedAt: T0 + 200 });
      for (const each of [first, back, repeat]) await store.insert(each);
      expect([await copyOf(back), await copyOf(repeat)]).toEqual([null, null]);
      // A late copy whose order moved on through both secrets meanwhile is still a copy.
      const a1 = statusChange('o-late', 'confirmed', 'preparing', { verifiedBy: 'sha256:a', receivedAt: T0 });
      const a2 = statusChange('o-late', 'preparing', 'confirmed', { verifiedBy: 'sha256:a', receivedAt: T0 + 10 });
      const b2 = statusChange('o-late', 'preparing', 'confirmed', { verifiedBy: 'sha256:b', receivedAt: T0 + 100 });
      const b1 = statusChange('o-late', 'confirmed', 'preparing', { verifiedBy: 'sha256:b', receivedAt: T0 + 200 });
      for (const each of [a1, a2, b2, b1]) await store.insert(each);
      expect([await copyOf(b2), await copyOf(b1)]).toEqual([a2.deliveryId, a1.deliveryId]);
    });

    it('pairs a copy with the nearest unpaired delivery in time, not the oldest', async () => {
      const tenant = 'loja-near';
      const via = (secret: string, previous: string, status: string, receivedAt: number) => statusChange('o-near', previous, status, { tenant, verifiedBy: secret, receivedAt });
      // The new endpoint's copy of the first confirmed -> preparing died.
      const lonely = via('ep-a', 'confirmed', 'preparing', T0);
      const backA = via('ep-a', 'preparing', 'confirmed', T0 + SECOND);
      const backB = via('ep-b', 'preparing', 'confirmed', T0 + SECOND + 50);
      const againA = via('ep-a', 'confirmed', 'preparing', T0 + 2 * SECOND);
      const againB = via('ep-b', 'confirmed', 'preparing', T0 + 2 * SECOND + 50);
      for (const each of [lonely, backA, backB, againA, againB]) await store.insert(each);
      expect(await copyOf(backB)).toBe(backA.deliveryId);
      expect(await copyOf(againB)).toBe(againA.deliveryId);
      expect(await copyOf(lonely)).toBeNull();
    });
  });
}
