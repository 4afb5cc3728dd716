import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import type { SyncState } from './state.ts';

/** The test functions the suite needs: pass vitest's (or jest's) own; the inbox's suite takes the same. */
export type SyncConformanceTestApi = ConformanceTestApi;

const T0 = 1_800_000_000_000;
const LEASE = 60_000;

/**
 * The behaviour every {@link SyncState} must have, as a test suite. Run it with a factory that
 * returns a fresh, empty state each time; the shipped SQLite and Postgres states run the same suite.
 *
 * @example
 * ```ts
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { syncStateConformance } from 'integration-sdk/sync';
 *
 * syncStateConformance('my MySQL state', () => mysqlSyncState({ url }), { describe, it, expect, beforeEach, afterEach });
 * ```
 */
export function syncStateConformance(name: string, makeState: () => SyncState | Promise<SyncState>, api: SyncConformanceTestApi): void {
  const { describe, it, expect, beforeEach, afterEach } = api;
  describe(`SyncState conformance: ${name}`, () => {
    let state: SyncState;
    beforeEach(async () => {
      state = await makeState();
      await state.migrate();
    });
    afterEach(async () => {
      await state.close();
    });

    const run = (runId: string, scope = 's1', kind: 'catalog' | 'stock' = 'catalog') =>
      state.startRun({ runId, scope, kind, baseUrl: 'http://x/integration/v1', merchantId: 'm', full: false, startedAt: T0 });

    it('gives the lease to one run at a time, names the holder, and lets it go on expiry or release', async () => {
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'a', startedAt: T0, now: T0, leaseMs: LEASE })).toBeNull();
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'b', startedAt: T0 + 1, now: T0 + 1, leaseMs: LEASE })).toEqual({ runId: 'a', startedAt: T0 });
      // Another kind, another scope: free.
      expect(await state.acquireLease({ scope: 's1', kind: 'stock', runId: 'c', startedAt: T0, now: T0, leaseMs: LEASE })).toBeNull();
      expect(await state.acquireLease({ scope: 's2', kind: 'catalog', runId: 'd', startedAt: T0, now: T0, leaseMs: LEASE })).toBeNull();
      expect(await state.renewLease({ scope: 's1', kind: 'catalog', runId: 'a', now: T0 + 30_000, leaseMs: LEASE })).toBe(true);
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'b', startedAt: T0, now: T0 + 80_000, leaseMs: LEASE })).toEqual({ runId: 'a', startedAt: T0 });
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'b', startedAt: T0, now: T0 + 90_001, leaseMs: LEASE })).toBeNull();
      expect(await state.renewLease({ scope: 's1', kind: 'catalog', runId: 'a', now: T0 + 90_002, leaseMs: LEASE })).toBe(false);
      await state.releaseLease({ scope: 's1', kind: 'catalog', runId: 'b' });
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'e', startedAt: T0, now: T0 + 90_003, leaseMs: LEASE })).toBeNull();
    });

    it('marks a running run whose lease expired as interrupted', async () => {
      await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'dead', startedAt: T0, now: T0, leaseMs: LEASE });
      await run('dead');
      await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'next', startedAt: T0, now: T0 + LEASE + 1, leaseMs: LEASE });
      expect((await state.run('dead'))?.outcome).toBe('interrupted');
    });

    it('looks up, marks seen and acknowledges items in windows, per scope and kind', async () => {
      const seq = await run('r1');
      await state.markSeen('s1', 'catalog', seq, [
        { key: 'A', externalId: 'A', storeId: '', index: 0 },
        { key: 'B', externalId: 'B', storeId: '', index: 1 },
      ]);
      await state.recordBatch({
        scope: 's1',
        kind: 'catalog',
        runId: 'r1',
        sentAt: T0 + 5,
        seen: { seq, marks: [{ key: 'D', externalId: 'D', storeId: '', index: 3 }] },
        acknowledged: [{ key: 'A', index: 0, externalId: 'A', storeId: '', fingerprint: 'fa', storeIds: ['st-1', 'st-2'] }],
        errors: [{ index: 1, external_id: 'B', code: 'INTERNAL', message: 'boom' }],
      });
      const found = await state.lookup('s1', 'catalog', ['A', 'B', 'C']);
      expect(found.get('A')).toEqual({ fingerprint: 'fa', sentAt: T0 + 5, seenSeq: seq, seenIndex: 0 });
      expect(found.get('B')).toEqual({ fingerprint: null, sentAt: null, seenSeq: seq, seenIndex: 1 });
      expect(found.has('C')).toBe(false);
      expect((await state.orphans('s1', 'catalog', seq + 1, null, 10))[0]).toMatchObject({ externalId: 'A', storeIds: ['st-1', 'st-2'] });
      // A batch's seen marks are written with its answer, acknowledged or not.
      expect((await state.lookup('s1', 'catalog', ['D'])).get('D')).toEqual({ fingerprint: null, sentAt: null, seenSeq: seq, seenIndex: 3 });
      expect((await state.lookup('s2', 'catalog', ['A'])).size).toBe(0);
      expect((await state.lookup('s1', 'stock', ['A'])).size).toBe(0);
      expect(await state.runErrors('r1', -1, 10)).toEqual([{ index: 1, external_id: 'B', code: 'INTERNAL', message: 'boom' }]);
    });

    it('finds orphans against a complete run, pages them by key, and forgets', async () => {
      const first = await run('r1');
      const keys = ['A', 'B', 'C', 'D'];
      await state.markSeen('s1', 'catalog', first, keys.map((key, index) => ({ key, externalId: key, storeId: '', index })));
      await state.recordBatch({ scope: 's1', kind: 'catalog', runId: 'r1', sentAt: T0, seen: { seq: first, marks: [] }, acknowledged: keys.map((key, index) => ({ key, index, externalId: key, storeId: '', fingerprint: key, storeIds: ['st'] })), errors: [] });
      await state.finishRun('r1', { finishedAt: T0 + 1, outcome: 'completed', complete: true, orphans: 0, error: null, total: 4, unchanged: 0, sent: 4, created: 4, updated: 0, errors: 0 });
      const second = await run('r2');
      await state.markSeen('s1', 'catalog', second, [{ key: 'B', externalId: 'B', storeId: '', index: 0 }]);
      await state.finishRun('r2', { finishedAt: T0 + 2, outcome: 'completed', complete: true, orphans: 3, error: null, total: 1, unchanged: 1, sent: 0, created: 0, updated: 0, errors: 0 });
      const last = await state.lastCompleteRun('s1', 'catalog');
      expect(last?.runId).toBe('r2');
      expect(await state.countOrphans('s1', 'catalog', last!.seq)).toBe(3);
      const page1 = await state.orphans('s1', 'catalog', last!.seq, null, 2);
      expect(page1.map((row) => row.externalId)).toEqual(['A', 'C']);
      expect(page1[0]).toMatchObject({ storeIds: ['st'], sentAt: T0 });
      const page2 = await state.orphans('s1', 'catalog', last!.seq, 'C', 2);
      expect(page2.map((row) => row.externalId)).toEqual(['D']);
      expect(await state.forgetKeys('s1', 'catalog', ['C', 'nothing'])).toBe(1);
      expect(await state.countOrphans('s1', 'catalog', last!.seq)).toBe(2);
      expect(await state.forget('s1', 'catalog', ['A'])).toBe(1);
      expect(await state.countOrphans('s1', 'catalog', last!.seq)).toBe(1);
      expect(await state.forget('s1', 'catalog')).toBe(2);
      expect((await state.lookup('s1', 'catalog', keys)).size).toBe(0);
    });

    it('lists runs newest first, pages them, and keeps their counts', async () => {
      await run('r1', 's1', 'catalog');
      await run('r2', 's1', 'stock');
      await state.finishRun('r2', { finishedAt: T0 + 9, outcome: 'failed', complete: false, orphans: null, error: 'ServiceUnavailableError: down', total: 3, unchanged: 1, sent: 2, updated: 0, errors: 2 });
      const runs = await state.runs(10);
      expect(runs.map((r) => r.runId)).toEqual(['r2', 'r1']);
      expect(runs[0]).toMatchObject({ kind: 'stock', outcome: 'failed', complete: false, total: 3, unchanged: 1, sent: 2, updated: 0, errors: 2, finishedAt: T0 + 9, error: 'ServiceUnavailableError: down' });
      expect(runs[0]!.created).toBe(undefined);
      expect(runs[1]).toMatchObject({ outcome: 'running', finishedAt: null });
      expect((await state.runs(10, runs[0]!.seq)).map((r) => r.runId)).toEqual(['r1']);
    });
  });
}
