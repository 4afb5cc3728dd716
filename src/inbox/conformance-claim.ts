// The parts of the InboxStore conformance suite about fair claiming across tenants when many of
// them have entries that are not due (docs/inbox.md, "Fair claiming across tenants"): a tenant's
// due entry is claimed whatever the number of tenants whose entries wait for a retry, a claim that
// stops its walk early says where, and an entry's due time is kept through every way it changes.
import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import { entry, LEASE, T0, WAIT } from './conformance-entries.ts';
import type { ClaimRequest, InboxEntryWithPayload, InboxStore } from './store.ts';

const HOUR = 3_600_000;

export function fairClaimConformance(current: () => InboxStore, test: ConformanceTestApi): void {
  const { describe, it, expect } = test;
  describe('fair claiming with many tenants whose entries are not due', () => {
    let store: InboxStore;
    test.beforeEach(async () => {
      store = current();
    });
    const claim = (now: number, limit: number, more: Partial<ClaimRequest> = {}) =>
      store.claim({ workerId: 'w', now, leaseMs: LEASE, limit, orderWaitMs: WAIT, ...more });
    const failAll = async (claimed: InboxEntryWithPayload[], now: number, nextAttemptAt: number) => {
      for (const each of claimed) await store.fail(each.id, { workerId: 'w', tenant: each.tenant, error: 'Error: the ERP is down', now, nextAttemptAt });
    };

    it("claims a tenant's new entry at once, however many other tenants have an entry waiting for its retry", async () => {
      // An ERP outage: every handler failed, and 1,100 tenants each have an entry waiting an hour.
      const waiting = 1100;
      for (let i = 0; i < waiting; i += 1) await store.insert(entry({ tenant: `t${String(i).padStart(5, '0')}` }));
      for (let claimed = await claim(T0, 250); claimed.length > 0; claimed = await claim(T0, 250)) await failAll(claimed, T0, T0 + HOUR);
      const quiet = entry({ tenant: 'zz-quiet', receivedAt: T0 + 1000 });
      await store.insert(quiet);
      // From the first tenant (a worker that has served nobody yet), and from one of the waiting ones.
      expect((await claim(T0 + 2000, 4)).map((each) => each.id)).toEqual([quiet.deliveryId]);
      await store.fail(quiet.deliveryId, { workerId: 'w', tenant: 'zz-quiet', error: 'Error: again', now: T0 + 2000, nextAttemptAt: T0 + 3000 });
      expect((await claim(T0 + 3000, 4, { afterTenant: 't00500' })).map((each) => each.id)).toEqual([quiet.deliveryId]);
      await store.complete(quiet.deliveryId, 'w', T0 + 3000, 'zz-quiet');
      // The waiting entries come due at their time, every one of them.
      let due = 0;
      for (let claimed = await claim(T0 + HOUR, 500); claimed.length > 0; claimed = await claim(T0 + HOUR, 500)) {
        due += claimed.length;
        for (const each of claimed) await store.complete(each.id, 'w', T0 + HOUR, each.tenant);
      }
      expect(due).toBe(waiting);
    });

    it('says where a walk that stopped early got to: passed on as afterTenant, the next claims reach every tenant', async () => {
      // 300 tenants whose only due entry cannot run yet (a status change waiting for its order.created).
      for (let i = 0; i < 300; i += 1) {
        await store.insert(entry({ tenant: `b${String(i).padStart(4, '0')}`, event: 'order.status_changed', orderId: `blocked-${i}` }));
      }
      const quiet = entry({ tenant: 'zz-quiet' });
      await store.insert(quiet);
      let afterTenant: string | null = null;
      const claimed: string[] = [];
      for (let round = 0; round < 10 && claimed.length === 0; round += 1) {
        const taken = await claim(T0 + 1000, 4, { afterTenant, walkedTo: (tenant) => void (afterTenant = tenant) });
        claimed.push(...taken.map((each) => each.id));
      }
      expect(claimed).toEqual([quiet.deliveryId]);
    });

    it("keeps each tenant's due time through failures, new entries, retries and dead entries brought back", async () => {
      const first = entry({ tenant: 'loja-a' });
      const second = entry({ tenant: 'loja-a' });
      await store.insert(first);
      await store.insert(second);
      const taken = await claim(T0, 4);
      expect(taken).toHaveLength(2);
      await store.fail(first.deliveryId, { workerId: 'w', tenant: 'loja-a', error: 'Error: no', now: T0, nextAttemptAt: T0 + 100 });
      await store.fail(second.deliveryId, { workerId: 'w', tenant: 'loja-a', error: 'Error: no', now: T0, nextAttemptAt: T0 + 200 });
      // Nothing due yet; then each at its time, not before.
      expect(await claim(T0 + 50, 4)).toEqual([]);
      const newer = entry({ tenant: 'loja-a', receivedAt: T0 + 60 });
      await store.insert(newer);
      expect((await claim(T0 + 60, 4)).map((each) => each.id)).toEqual([newer.deliveryId]);
      expect(await claim(T0 + 99, 4)).toEqual([]);
      expect((await claim(T0 + 100, 4)).map((each) => each.id)).toEqual([first.deliveryId]);
      expect(await claim(T0 + 150, 4)).toEqual([]);
      expect((await claim(T0 + 200, 4)).map((each) => each.id)).toEqual([second.deliveryId]);
      expect(await claim(T0 + 300, 4)).toEqual([]);
      // A done entry retried, and a dead one brought back, are due at once.
      await store.complete(newer.deliveryId, 'w', T0 + 300, 'loja-a');
      expect(await store.retry(newer.deliveryId, T0 + 400, 'loja-a')).toBe(true);
      expect((await claim(T0 + 400, 4)).map((each) => each.id)).toEqual([newer.deliveryId]);
      await store.fail(first.deliveryId, { workerId: 'w', tenant: 'loja-a', error: 'Error: no', now: T0 + 400, nextAttemptAt: null });
      expect(await claim(T0 + 500, 4)).toEqual([]);
      expect(await store.retryDead(T0 + 600, { tenant: 'loja-a' })).toBe(1);
      expect((await claim(T0 + 600, 4)).map((each) => each.id)).toEqual([first.deliveryId]);
    });

    it("claims every entry stored while claims run at the same time (a claim finding its tenant's last entry taken does not pass over one being stored)", async () => {
      const stored: string[] = [];
      const claimed = new Set<string>();
      const take = async (now: number) => {
        for (const each of await claim(now, 4)) {
          claimed.add(each.id);
          await store.complete(each.id, 'w', now, each.tenant);
        }
      };
      // Each round a tenant of its own: its first entry, then its second stored while claims take the first.
      for (let round = 0; round < 60; round += 1) {
        const [first, second] = [entry({ tenant: `race-${round}`, receivedAt: T0 + round }), entry({ tenant: `race-${round}`, receivedAt: T0 + round })];
        stored.push(first.deliveryId, second.deliveryId);
        await store.insert(first);
        await Promise.all([take(T0 + round), store.insert(second), take(T0 + round)]);
      }
      for (let round = 0; round < 50 && claimed.size < stored.length; round += 1) await take(T0 + 100);
      expect(claimed.size).toBe(stored.length);
    });
  });
}
