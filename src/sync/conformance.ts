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
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'b', startedAt: T0 + 1, now: T0 + 1, leaseMs: LEASE })).toMatchObject({ runId: 'a', startedAt: T0 });
      // Another kind, another scope: free.
      expect(await state.acquireLease({ scope: 's1', kind: 'stock', runId: 'c', startedAt: T0, now: T0, leaseMs: LEASE })).toBeNull();
      expect(await state.acquireLease({ scope: 's2', kind: 'catalog', runId: 'd', startedAt: T0, now: T0, leaseMs: LEASE })).toBeNull();
      expect(await state.renewLease({ scope: 's1', kind: 'catalog', runId: 'a', now: T0 + 30_000, leaseMs: LEASE })).toBe(true);
      expect(await state.acquireLease({ scope: 's1', kind: 'catalog', runId: 'b', startedAt: T0, now: T0 + 80_000, leaseMs: LEASE })).toMatchObject({ runId: 'a', startedAt: T0 });
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
      expect(found.get('A')).toEqual({ fingerprint: 'fa', sentAt: T0 + 5, seenSeq: seq, seenIndex: 0, inFlight: false });
      expect(found.get('B')).toEqual({ fingerprint: null, sentAt: null, seenSeq: seq, seenIndex: 1, inFlight: false });
      expect(found.has('C')).toBe(false);
      expect((await state.orphans('s1', 'catalog', seq + 1, null, 10))[0]).toMatchObject({ externalId: 'A', storeIds: ['st-1', 'st-2'] });
      // A batch's seen marks are written with its answer, acknowledged or not.
      expect((await state.lookup('s1', 'catalog', ['D'])).get('D')).toEqual({ fingerprint: null, sentAt: null, seenSeq: seq, seenIndex: 3, inFlight: false });
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

    it('lists the runs of one scope when asked', async () => {
      await run('r1', 's1', 'catalog');
      await run('r2', 's2', 'catalog');
      await run('r3', 's1', 'stock');
      expect((await state.runs(10, undefined, 's1')).map((r) => r.runId)).toEqual(['r3', 'r1']);
      expect((await state.runs(1, undefined, 's1')).map((r) => r.runId)).toEqual(['r3']);
      const [newest] = await state.runs(10, undefined, 's1');
      expect((await state.runs(10, newest!.seq, 's1')).map((r) => r.runId)).toEqual(['r1']);
      expect((await state.runs(10, undefined, 's2')).map((r) => r.runId)).toEqual(['r2']);
      expect(await state.runs(10, undefined, 'nobody')).toEqual([]);
    });

    it('marks a batch in flight before it leaves: only an acknowledgement clears the mark; an item error or no answer keeps it', async () => {
      const seq = await run('r1');
      const item = (key: string, index: number) => ({ key, externalId: key, storeId: '', index, pairs: [] });
      // A, B and C were acknowledged by an earlier batch.
      await state.recordBatch({
        scope: 's1', kind: 'catalog', runId: 'r1', sentAt: T0, seen: { seq, marks: [] }, errors: [],
        acknowledged: ['A', 'B', 'C'].map((key, index) => ({ key, index, externalId: key, storeId: '', fingerprint: `old-${key}`, storeIds: [] })),
      });
      await state.markInFlight({ scope: 's1', kind: 'catalog', seq, items: [item('A', 0), item('B', 1), item('C', 2), item('N', 3)] });
      const marked = await state.lookup('s1', 'catalog', ['A', 'B', 'C', 'N']);
      expect(marked.get('A')).toEqual({ fingerprint: 'old-A', sentAt: T0, seenSeq: seq, seenIndex: 0, inFlight: true });
      // A new item gets a row without a fingerprint, in flight and seen.
      expect(marked.get('N')).toEqual({ fingerprint: null, sentAt: null, seenSeq: seq, seenIndex: 3, inFlight: true });
      // The answer: A acknowledged, B an item error (STORE_WRITE_FAILED: partly written); C and N got no word.
      await state.recordBatch({
        scope: 's1', kind: 'catalog', runId: 'r1', sentAt: T0 + 7, seen: { seq, marks: [] },
        acknowledged: [{ key: 'A', index: 0, externalId: 'A', storeId: '', fingerprint: 'new-A', storeIds: [] }],
        errors: [{ index: 1, external_id: 'B', code: 'STORE_WRITE_FAILED', message: 'store' }],
      });
      const after = await state.lookup('s1', 'catalog', ['A', 'B', 'C', 'N']);
      expect(after.get('A')).toMatchObject({ fingerprint: 'new-A', sentAt: T0 + 7, inFlight: false });
      expect(after.get('B')).toMatchObject({ fingerprint: 'old-B', sentAt: T0, inFlight: true });
      expect(after.get('C')).toMatchObject({ fingerprint: 'old-C', inFlight: true });
      expect(after.get('N')).toMatchObject({ fingerprint: null, inFlight: true });
      // Marks are per scope and kind.
      expect((await state.lookup('s1', 'stock', ['C'])).size).toBe(0);
      expect((await state.lookup('s2', 'catalog', ['C'])).size).toBe(0);
    });

    it('invalidates the other kind\'s fingerprint of a stock pair one kind writes where they differ on a field both give', async () => {
      const seq = await run('r1', 's1', 'stock');
      type Fields = { stock_quantity?: number; price_override?: number | null; active?: boolean };
      const pair = (externalId: string, storeId: string, fields: Fields) => ({ key: `${storeId.toLowerCase()}:${externalId}`, externalId, storeId, fields });
      const stockAck = (p: ReturnType<typeof pair>, fingerprint: string, index: number, withPairs = true) => ({
        key: p.key, index, externalId: p.externalId, storeId: p.storeId, fingerprint, storeIds: [p.storeId], ...(withPairs ? { pairs: [p] } : {}),
      });
      // Stock acknowledged (X, st-1) = 5, (X, st-2) = 7, (Y, st-1) = 1, and (Z, st-1) without its fields (an earlier version).
      await state.recordBatch({
        scope: 's1', kind: 'stock', runId: 'r1', sentAt: T0, seen: { seq, marks: [] }, errors: [],
        acknowledged: [
          stockAck(pair('X', 'st-1', { stock_quantity: 5 }), 'f5', 0),
          stockAck(pair('X', 'st-2', { stock_quantity: 7 }), 'f7', 1),
          stockAck(pair('Y', 'st-1', { stock_quantity: 1 }), 'f1', 2),
          stockAck(pair('Z', 'st-1', { stock_quantity: 1 }), 'fz', 3, false),
        ],
      });
      // Catalog acknowledged X with stores st-1 and ST-2 (7, and active), Y with st-9.
      const catalogSeq = await run('r2', 's1', 'catalog');
      await state.recordBatch({
        scope: 's1', kind: 'catalog', runId: 'r2', sentAt: T0, seen: { seq: catalogSeq, marks: [] }, errors: [],
        acknowledged: [
          { key: 'X', index: 0, externalId: 'X', storeId: '', fingerprint: 'cx', storeIds: ['st-1', 'ST-2'], pairs: [pair('X', 'st-1', { stock_quantity: 5 }), pair('X', 'ST-2', { stock_quantity: 7, active: true })] },
          { key: 'Y', index: 1, externalId: 'Y', storeId: '', fingerprint: 'cy', storeIds: ['st-9'], pairs: [pair('Y', 'st-9', { stock_quantity: 3 })] },
        ],
      });
      // A catalog item writes X's st-1 with 10 (stock said 5) and st-2 with 7 and inactive (stock
      // gives no `active`: they agree); Z's st-1 with what stock sent, but stock's fields are unknown.
      await state.markInFlight({
        scope: 's1', kind: 'catalog', seq: catalogSeq,
        items: [
          { key: 'X', externalId: 'X', storeId: '', index: 0, pairs: [pair('X', 'st-1', { stock_quantity: 10 }), pair('X', 'st-2', { stock_quantity: 7, active: false })] },
          { key: 'Z', externalId: 'Z', storeId: '', index: 1, pairs: [pair('Z', 'st-1', { stock_quantity: 1 })] },
        ],
      });
      const stock = await state.lookup('s1', 'stock', ['st-1:X', 'st-2:X', 'st-1:Y', 'st-1:Z']);
      expect(stock.get('st-1:X')!.fingerprint).not.toBe('f5');
      expect(stock.get('st-1:X')!.fingerprint).not.toBeNull();
      expect(stock.get('st-1:X')!.inFlight).toBe(false);
      expect(stock.get('st-2:X')!.fingerprint).toBe('f7');
      expect(stock.get('st-1:Y')!.fingerprint).toBe('f1');
      expect(stock.get('st-1:Z')!.fingerprint).not.toBe('fz');
      // Still acknowledged before: a stock orphan if it leaves the stock export.
      expect(await state.countAcknowledged('s1', 'stock')).toBe(4);

      // Stock writes (X, st-2) with 7 and a store price the block does not give: they agree, X keeps
      // its fingerprint; and (Y, st-1), a store Y was not sent with.
      const stockSeq = await run('r3', 's1', 'stock');
      const agreeing = [pair('X', 'st-2', { stock_quantity: 7, price_override: 2 }), pair('Y', 'st-1', { stock_quantity: 2 })];
      await state.markInFlight({ scope: 's1', kind: 'stock', seq: stockSeq, items: agreeing.map((p, index) => ({ key: p.key, externalId: p.externalId, storeId: p.storeId, index, pairs: [p] })) });
      expect((await state.lookup('s1', 'catalog', ['X'])).get('X')!.fingerprint).toBe('cx');
      // Then with 8: X was last sent with ST-2 (any case) holding 7, and loses its catalog fingerprint.
      const differing = pair('X', 'st-2', { stock_quantity: 8 });
      await state.markInFlight({ scope: 's1', kind: 'stock', seq: stockSeq, items: [{ key: differing.key, externalId: 'X', storeId: 'st-2', index: 0, pairs: [differing] }] });
      const catalog = await state.lookup('s1', 'catalog', ['X', 'Y']);
      expect(catalog.get('X')!.fingerprint).not.toBe('cx');
      expect(catalog.get('X')!.fingerprint).not.toBeNull();
      expect(catalog.get('Y')!.fingerprint).toBe('cy');

      // An acknowledgement invalidates again (a run of the other kind may have written the pair
      // meanwhile): the stock item of (X, st-2) was acknowledged as 8 after the catalog's mark; the
      // catalog's answer now says it wrote 7 there.
      await state.recordBatch({
        scope: 's1', kind: 'stock', runId: 'r3', sentAt: T0 + 1, seen: { seq: stockSeq, marks: [] }, errors: [],
        acknowledged: [stockAck(differing, 'f8', 0)],
      });
      expect((await state.lookup('s1', 'stock', ['st-2:X'])).get('st-2:X')!.fingerprint).toBe('f8');
      await state.recordBatch({
        scope: 's1', kind: 'catalog', runId: 'r2', sentAt: T0 + 2, seen: { seq: catalogSeq, marks: [] }, errors: [],
        acknowledged: [{ key: 'X', index: 0, externalId: 'X', storeId: '', fingerprint: 'cx2', storeIds: ['st-1', 'st-2'], pairs: [pair('X', 'st-1', { stock_quantity: 10 }), pair('X', 'st-2', { stock_quantity: 7, active: false })] }],
      });
      expect((await state.lookup('s1', 'stock', ['st-2:X'])).get('st-2:X')!.fingerprint).not.toBe('f8');
      expect((await state.lookup('s1', 'catalog', ['X'])).get('X')!.fingerprint).toBe('cx2');
      // The catalog's acknowledged fields are what a later stock write is compared with: 10 at st-1.
      const same = pair('X', 'st-1', { stock_quantity: 10, price_override: null });
      await state.markInFlight({ scope: 's1', kind: 'stock', seq: stockSeq, items: [{ key: same.key, externalId: 'X', storeId: 'st-1', index: 0, pairs: [same] }] });
      expect((await state.lookup('s1', 'catalog', ['X'])).get('X')!.fingerprint).toBe('cx2');
      // Other scopes are untouched.
      expect((await state.lookup('s2', 'stock', ['st-1:Y'])).size).toBe(0);
    });

    it('counts what was acknowledged, per scope and kind', async () => {
      const seq = await run('r1');
      await state.markSeen('s1', 'catalog', seq, [{ key: 'Z', externalId: 'Z', storeId: '', index: 9 }]);
      await state.recordBatch({
        scope: 's1', kind: 'catalog', runId: 'r1', sentAt: T0, seen: { seq, marks: [] }, errors: [],
        acknowledged: ['A', 'B'].map((key, index) => ({ key, index, externalId: key, storeId: '', fingerprint: key, storeIds: [] })),
      });
      expect(await state.countAcknowledged('s1', 'catalog')).toBe(2);
      expect(await state.countAcknowledged('s1', 'stock')).toBe(0);
      expect(await state.countAcknowledged('s2', 'catalog')).toBe(0);
    });

    it('records the lease holder\'s host and pid, and hands over a lease whose holder is named gone', async () => {
      const lease = { scope: 's1', kind: 'catalog' as const, startedAt: T0, leaseMs: LEASE };
      expect(await state.acquireLease({ ...lease, runId: 'dead', now: T0, host: 'host-a', pid: 4242 })).toBeNull();
      await run('dead');
      expect(await state.acquireLease({ ...lease, runId: 'next', now: T0 + 1, host: 'host-a', pid: 5000 })).toEqual({ runId: 'dead', startedAt: T0, host: 'host-a', pid: 4242 });
      // Replacing another run than the holder changes nothing.
      expect(await state.acquireLease({ ...lease, runId: 'next', now: T0 + 2, host: 'host-a', pid: 5000, replacing: 'someone-else' })).toMatchObject({ runId: 'dead' });
      expect(await state.acquireLease({ ...lease, runId: 'next', now: T0 + 3, host: 'host-a', pid: 5000, replacing: 'dead' })).toBeNull();
      expect((await state.run('dead'))?.outcome).toBe('interrupted');
      expect(await state.acquireLease({ ...lease, runId: 'third', now: T0 + 4 })).toEqual({ runId: 'next', startedAt: T0, host: 'host-a', pid: 5000 });
      expect(await state.renewLease({ ...lease, runId: 'dead', now: T0 + 5 })).toBe(false);
      // A holder that recorded neither (an earlier version) is named without them.
      await state.releaseLease({ scope: 's1', kind: 'catalog', runId: 'next' });
      expect(await state.acquireLease({ ...lease, runId: 'anonymous', now: T0 + 6 })).toBeNull();
      expect(await state.acquireLease({ ...lease, runId: 'other', now: T0 + 7 })).toEqual({ runId: 'anonymous', startedAt: T0, host: null, pid: null });
    });
  });
}
