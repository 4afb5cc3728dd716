// The delta sync against the sandbox over its socket, with real SQLite files: every request on the
// wire is counted by the client's recording fetch.
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { Sandbox } from 'integration-sdk/sandbox';
import { createSync, SyncRunInProgressError, type Sync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { clientFor, ManualClock, onCleanup, startSandbox, type Exchange } from '../e2e/helpers.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { leaseHost } from '../../src/sync/run-lease.ts';

const dir = tempDir('sync-e2e');
afterAll(() => dir.remove());
let files = 0;
const freshPath = () => `${dir.path}/state-${++files}.db`;

const DAY = 86_400_000;

function products(count: number, price = 10) {
  return Array.from({ length: count }, (_, i) => ({ external_id: `ITEM-${i}`, name: `Product ${i}`, price }));
}

const writes = (exchanges: Exchange[]) => exchanges.filter((e) => e.method !== 'GET');
const itemsSent = (exchanges: Exchange[]) => writes(exchanges).flatMap((e) => (e.body as { items: { external_id: string }[] }).items.map((item) => item.external_id));

function syncOn(sandbox: Sandbox, path: string, options: { apiKey?: string; clock?: ManualClock; maxAgeDays?: number; maxRetries?: number } = {}) {
  const { client, exchanges } = clientFor(sandbox, { ...(options.apiKey ? { apiKey: options.apiKey } : {}), ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }) });
  const sync: Sync = createSync({ client, state: sqliteSyncState({ path }), maxAgeDays: options.maxAgeDays, clock: options.clock });
  onCleanup(() => sync.close());
  return { sync, exchanges, client };
}

describe('sync.catalog', () => {
  it('sends everything once, then nothing but health() on an identical run', async () => {
    const sandbox = await startSandbox();
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    const first = await sync.catalog(products(1200));
    expect(first).toMatchObject({ total: 1200, unchanged: 0, sent: 1200, created: 1200, updated: 0, errors: 0, orphans: 0, results: [] });
    expect(writes(exchanges)).toHaveLength(3);
    exchanges.length = 0;
    const second = await sync.catalog(products(1200));
    expect(second).toMatchObject({ total: 1200, unchanged: 1200, sent: 0, created: 0, updated: 0, errors: 0, orphans: 0 });
    expect(exchanges.map((e) => `${e.method} ${e.path}`)).toEqual(['GET /integration/v1/health']);
  });

  it('records a batch the service acknowledged when its answer arrives, while the input is still being read; an abort then keeps it', async () => {
    const sandbox = await startSandbox();
    const path = freshPath();
    const { sync } = syncOn(sandbox, path);
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    async function* slowExport() {
      yield* products(500);
      await stalled; // the next batch is far away: a long, sparse export
      yield* products(501).slice(500);
    }
    const controller = new AbortController();
    const progress: number[] = [];
    const running = sync.catalog(slowExport(), { signal: controller.signal, onProgress: (p) => progress.push(p.created ?? 0) }).catch((error: unknown) => error);
    await expect.poll(() => progress.at(-1), { timeout: 10_000 }).toBe(500);
    controller.abort(new Error('stopped by the operator'));
    release();
    expect(await running).toMatchObject({ message: 'stopped by the operator' });
    const { sync: again, exchanges } = syncOn(sandbox, path);
    expect(await again.catalog(products(500))).toMatchObject({ unchanged: 500, sent: 0 });
    expect(writes(exchanges)).toHaveLength(0);
  });

  it('rejects a bad input with a promise, never a throw at the call, as upsertProducts does', async () => {
    const sandbox = await startSandbox();
    const { sync } = syncOn(sandbox, freshPath());
    let thrown: unknown;
    let running: Promise<unknown> | undefined;
    try {
      running = sync.catalog(null as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeUndefined();
    await expect(running).rejects.toThrow();
  });

  it('sends three edited products in one batch of three', async () => {
    const sandbox = await startSandbox();
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    await sync.catalog(products(1000));
    exchanges.length = 0;
    const edited = products(1000);
    edited[5]!.price = 11;
    edited[500]!.name = 'Renamed';
    edited[999]!.price = 10.5;
    const run = await sync.catalog(edited);
    expect(run).toMatchObject({ total: 1000, unchanged: 997, sent: 3, updated: 3, errors: 0 });
    expect(writes(exchanges)).toHaveLength(1);
    expect(itemsSent(exchanges)).toEqual(['ITEM-5', 'ITEM-500', 'ITEM-999']);
    expect(sandbox.getProduct('ITEM-500')?.name).toBe('Renamed');
  });

  it('treats numbers as written: 12.340 is 12.34, 12.3401 is a change; the field order does not matter', async () => {
    const sandbox = await startSandbox();
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    await sync.catalog([{ external_id: 'A', name: 'A', price: 12.34 }]);
    exchanges.length = 0;
    // eslint-disable-next-line no-loss-of-precision
    expect((await sync.catalog([{ price: 12.340, name: 'A', external_id: 'A' }])).unchanged).toBe(1);
    expect((await sync.catalog([{ external_id: 'A', name: 'A', price: 12.3401 }])).sent).toBe(1);
    expect(writes(exchanges)).toHaveLength(1);
  });

  it('keeps the whole-input repeat rule: a repeat is an item error whether or not it changed, and invalid items are not remembered', async () => {
    const sandbox = await startSandbox();
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    await sync.catalog(products(3));
    exchanges.length = 0;
    // 2500 items: the repeat of SKU-0 is in a later state window than its first occurrence.
    const input = [...products(2500), { external_id: 'ITEM-0', name: 'again', price: 1 }, { external_id: 'BAD', name: 'x', price: -1 }];
    const run = await sync.catalog(input);
    expect(run).toMatchObject({ total: 2502, unchanged: 3, sent: 2497, errors: 2 });
    expect(run.results.map((r) => [r.index, r.external_id, r.error?.code])).toEqual([
      [2500, 'ITEM-0', 'VALIDATION_ERROR'],
      [2501, 'BAD', 'VALIDATION_ERROR'],
    ]);
    expect(run.results[0]!.error?.message).toContain('first at index 0');
    expect(itemsSent(exchanges)).not.toContain('BAD');
    const errors = [];
    for await (const error of sync.runErrors(run.runId)) errors.push(error);
    expect(errors.map((e) => [e.index, e.external_id, e.code])).toEqual([
      [2500, 'ITEM-0', 'VALIDATION_ERROR'],
      [2501, 'BAD', 'VALIDATION_ERROR'],
    ]);
    expect(JSON.stringify(errors)).not.toContain('again');
  });

  it('sends again what the service refused (a forbidden store) and what was in a batch that failed with 500', async () => {
    const sandbox = await startSandbox();
    const path = freshPath();
    const [allowed, other] = sandbox.storeIds;
    const items = [
      { external_id: 'OK-1', name: 'ok', price: 1, stores: [{ store_id: allowed!, stock_quantity: 1 }] },
      { external_id: 'FORBIDDEN', name: 'f', price: 1, stores: [{ store_id: other!, stock_quantity: 1 }] },
    ];
    const limited = syncOn(sandbox, path, { apiKey: sandbox.keys.oneStore });
    const first = await limited.sync.catalog(items);
    expect(first).toMatchObject({ sent: 2, created: 1, errors: 1 });
    expect(first.results[0]).toMatchObject({ index: 1, external_id: 'FORBIDDEN', error: { code: 'FORBIDDEN_STORE' } });
    limited.exchanges.length = 0;
    const second = await limited.sync.catalog(items);
    expect(second).toMatchObject({ unchanged: 1, sent: 1, errors: 1 });
    expect(itemsSent(limited.exchanges)).toEqual(['FORBIDDEN']);

    // A batch answered 500 (after no retries): its items are errors, the run goes on to the next batch.
    const failing = syncOn(sandbox, freshPath(), { maxRetries: 0 });
    // The fault starts once health() has answered (the first progress comes after the first window is read).
    const failed = await failing.sync.catalog(products(3), { batchSize: 2, onProgress: () => sandbox.setFaults({ rate: 1, kinds: ['error500'] }) });
    sandbox.setFaults(null);
    expect(failed).toMatchObject({ total: 3, sent: 3, created: 0, errors: 3, orphans: 0 });
    expect(failed.results.map((r) => r.error?.code)).toEqual(['INTERNAL', 'INTERNAL', 'INTERNAL']);
    expect(writes(failing.exchanges)).toHaveLength(2);
    failing.exchanges.length = 0;
    const retried = await failing.sync.catalog(products(3));
    expect(retried).toMatchObject({ sent: 3, created: 3, errors: 0 });
  });

  it('rejects when the key is refused, keeping what was acknowledged', async () => {
    const sandbox = await startSandbox();
    const { sync } = syncOn(sandbox, freshPath());
    await sync.catalog(products(2));
    sandbox.setFeatureEnabled(false);
    await expect(sync.catalog(products(3))).rejects.toMatchObject({ name: 'FeatureDisabledError' });
    sandbox.setFeatureEnabled(true);
    const runs = [];
    for await (const run of sync.runs({ limit: 5 })) runs.push(run);
    // health() failed before the run began: nothing recorded for it.
    expect(runs.map((r) => r.outcome)).toEqual(['completed']);
    expect((await sync.catalog(products(3))).sent).toBe(1);
  });

  it('resends for age by the clock seam, resends everything with full or maxAgeDays 0', async () => {
    const sandbox = await startSandbox();
    const clock = new ManualClock();
    const path = freshPath();
    const { sync, exchanges } = syncOn(sandbox, path, { clock, maxAgeDays: 7 });
    await sync.catalog(products(4));
    clock.advance(7 * DAY);
    expect((await sync.catalog(products(4))).unchanged).toBe(4);
    clock.advance(1);
    expect((await sync.catalog(products(4))).sent).toBe(4);
    expect((await sync.catalog(products(4))).unchanged).toBe(4);
    exchanges.length = 0;
    expect(await sync.catalog(products(4), { full: true })).toMatchObject({ sent: 4, updated: 4 });
    expect(itemsSent(exchanges)).toHaveLength(4);
    const zero = syncOn(sandbox, path, { clock, maxAgeDays: 0 });
    expect((await zero.sync.catalog(products(4))).sent).toBe(4);
  });

  it('dry run counts what would be sent and writes nothing', async () => {
    const sandbox = await startSandbox();
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    await sync.catalog(products(10));
    exchanges.length = 0;
    const edited = products(12);
    edited[0]!.price = 99;
    const dry = await sync.catalog([...edited, edited[1]!], { dryRun: true });
    expect(dry).toMatchObject({ total: 13, unchanged: 9, sent: 3, errors: 1, orphans: null });
    expect(writes(exchanges)).toHaveLength(0);
    expect((await sync.catalog(edited)).sent).toBe(3);
  });

  it('does not reuse the state of another merchant scope: a one-store key sends everything again', async () => {
    const sandbox = await startSandbox();
    const path = freshPath();
    const [store] = sandbox.storeIds;
    const items = products(3).map((item) => ({ ...item, stores: [{ store_id: store!, stock_quantity: 1 }] }));
    await syncOn(sandbox, path).sync.catalog(items);
    const full = syncOn(sandbox, path);
    expect((await full.sync.catalog(items)).unchanged).toBe(3);
    const limited = syncOn(sandbox, path, { apiKey: sandbox.keys.oneStore });
    expect(await limited.sync.catalog(items)).toMatchObject({ unchanged: 0, sent: 3 });
    // Another service URL: nothing shared either.
    const other = await startSandbox();
    expect((await syncOn(other, path).sync.catalog(items)).sent).toBe(3);
  });

  it('lets one run per kind at a time: the second fails at once naming the first, which completes', async () => {
    const sandbox = await startSandbox();
    const path = freshPath();
    const a = syncOn(sandbox, path);
    const b = syncOn(sandbox, path);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* slow() {
      yield* products(3);
      await gate;
      yield* products(6).slice(3);
    }
    const first = a.sync.catalog(slow());
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [running] = await collect(a.sync.runs({ limit: 1 }));
    const second = await b.sync.catalog(products(6)).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(SyncRunInProgressError);
    expect((second as SyncRunInProgressError).runId).toBe(running!.runId);
    expect((second as Error).message).toContain(running!.runId);
    expect((second as Error).message).toContain(running!.startedAt.toISOString());
    // A stock run on the same scope is not blocked by the catalog run.
    const stockRun = await b.sync.stock([]);
    expect(stockRun.total).toBe(0);
    release();
    expect(await first).toMatchObject({ total: 6, created: 6 });
    expect((await b.sync.catalog(products(6))).unchanged).toBe(6);
  });

  it("takes at once a lease whose holder was a process on this host that is gone, and no other holder's", async () => {
    const sandbox = await startSandbox();
    const path = freshPath();
    const state = sqliteSyncState({ path });
    onCleanup(() => state.close());
    const { sync } = syncOn(sandbox, path);
    await sync.catalog(products(1));
    const { scope } = (await state.runs(1))[0]!;
    const exited = spawn(process.execPath, ['-e', '']);
    const gonePid = await new Promise<number>((resolve) => exited.on('exit', () => resolve(exited.pid!)));
    const holders = [
      { host: leaseHost(), pid: process.pid, taken: false },
      { host: 'another-host', pid: gonePid, taken: false },
      // The same host name in another PID namespace (a container on the host's network) is another host.
      { host: leaseHost().split(' ')[0]!, pid: gonePid, taken: process.platform !== 'linux' },
      { host: leaseHost(), pid: gonePid, taken: true },
    ];
    for (const [n, holder] of holders.entries()) {
      expect(await state.acquireLease({ scope, kind: 'catalog', runId: `holder-${n}`, startedAt: Date.now(), now: Date.now(), leaseMs: 60_000, host: holder.host, pid: holder.pid })).toBeNull();
      const run = sync.catalog(products(1));
      if (holder.taken) expect(await run).toMatchObject({ unchanged: 1 });
      else await expect(run).rejects.toMatchObject({ name: 'SyncRunInProgressError', runId: `holder-${n}` });
      await state.releaseLease({ scope, kind: 'catalog', runId: `holder-${n}` });
    }
  });

  it('reports orphans only after a complete run and deactivates them on request', async () => {
    const sandbox = await startSandbox();
    const [store] = sandbox.storeIds;
    const { sync } = syncOn(sandbox, freshPath());
    const items = products(4).map((item) => ({ ...item, stores: [{ store_id: store!, stock_quantity: 2 }] }));
    await sync.catalog(items);
    const controller = new AbortController();
    async function* aborted() {
      yield items[0]!;
      controller.abort();
      yield items[1]!;
    }
    await expect(sync.catalog(aborted(), { signal: controller.signal })).rejects.toThrow();
    expect(await collect(sync.orphans('catalog'))).toEqual([]);
    const run = await sync.catalog(items.slice(0, 2));
    expect(run.orphans).toBe(2);
    const orphans = await collect(sync.orphans('catalog'));
    expect(orphans.map((o) => [o.external_id, o.store_ids])).toEqual([
      ['ITEM-2', [store]],
      ['ITEM-3', [store]],
    ]);
    expect(orphans[0]!.lastSentAt).toBeInstanceOf(Date);
    // Half of the catalog: above the guard's 10%, confirmed with the exact count (test/sync/deactivate-guard.test.ts).
    const deactivated = await sync.deactivate('catalog', orphans, { confirm: 2 });
    expect(deactivated).toMatchObject({ deactivated: 2, errors: 0 });
    expect(sandbox.getProduct('ITEM-2')?.stores[store!]?.active).toBe(false);
    expect(sandbox.getProduct('ITEM-0')?.stores[store!]?.active).not.toBe(false);
    expect(await collect(sync.orphans('catalog'))).toEqual([]);
    const runs = await collect(sync.runs({ limit: 10 }));
    expect(runs.map((r) => r.outcome)).toEqual(['completed', 'aborted', 'completed']);
  });

  it('an input that fails (to open or mid-way) rejects the run, records it failed and frees the lease at once', async () => {
    const sandbox = await startSandbox();
    const { sync } = syncOn(sandbox, freshPath());
    const unopenable = { [Symbol.iterator]: () => { throw new Error('export unavailable'); } } as unknown as Iterable<never>;
    await expect(sync.catalog(unopenable)).rejects.toThrow('export unavailable');
    function* breaksMidway() {
      yield* products(1500);
      throw new Error('cursor lost');
    }
    await expect(sync.catalog(breaksMidway())).rejects.toThrow('cursor lost');
    const runs = await collect(sync.runs({ limit: 5 }));
    expect(runs.map((r) => [r.outcome, r.complete])).toEqual([['failed', false], ['failed', false]]);
    expect(runs[0]!.error).toContain('cursor lost');
    // Every batch sent before the input broke settled and was recorded; the next run finds them.
    expect(await sync.catalog(products(1500))).toMatchObject({ unchanged: 1500, sent: 0 });
  });

  it("lists the runs of its own client's scope, or every scope when asked", async () => {
    const sandbox = await startSandbox();
    const path = freshPath();
    const full = syncOn(sandbox, path);
    const limited = syncOn(sandbox, path, { apiKey: sandbox.keys.oneStore });
    const mine = await full.sync.catalog(products(1));
    const theirs = await limited.sync.catalog(products(1));
    expect((await collect(full.sync.runs())).map((run) => run.runId)).toEqual([mine.runId]);
    expect((await collect(limited.sync.runs())).map((run) => run.runId)).toEqual([theirs.runId]);
    expect((await collect(full.sync.runs({ allScopes: true }))).map((run) => run.runId)).toEqual([theirs.runId, mine.runId]);
  });

  it('forgets one item or all: they are sent again', async () => {
    const sandbox = await startSandbox();
    const { sync } = syncOn(sandbox, freshPath());
    await sync.catalog(products(3));
    expect(await sync.forget('catalog', { externalIds: ['ITEM-1'] })).toBe(1);
    expect((await sync.catalog(products(3))).sent).toBe(1);
    expect(await sync.forget('catalog')).toBe(3);
    expect((await sync.catalog(products(3))).sent).toBe(3);
  });
});

describe('sync.stock', () => {
  it('sends changed pairs only, and sends again a product not found', async () => {
    const sandbox = await startSandbox();
    const [s1, s2] = sandbox.storeIds;
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    const known = sandbox.seed.products[0]!;
    const items = [
      { external_id: known, store_id: s1!, stock_quantity: 5 },
      { external_id: known, store_id: s2!, stock_quantity: 7 },
      { external_id: 'NOT-IN-CATALOG', store_id: s1!, stock_quantity: 1 },
    ];
    const first = await sync.stock(items);
    expect(first).toMatchObject({ total: 3, sent: 3, updated: 2, errors: 1 });
    expect('created' in first).toBe(false);
    expect(first.results[0]).toMatchObject({ index: 2, store_id: s1, error: { code: 'PRODUCT_NOT_FOUND' } });
    exchanges.length = 0;
    const second = await sync.stock([items[0]!, { ...items[1]!, stock_quantity: 8 }, items[2]!, { ...items[0]!, store_id: s1!.toUpperCase() }]);
    expect(second).toMatchObject({ total: 4, unchanged: 1, sent: 2, updated: 1, errors: 2 });
    expect(writes(exchanges)).toHaveLength(1);
    expect((writes(exchanges)[0]!.body as { items: unknown[] }).items).toEqual([
      { external_id: known, store_id: s2, stock_quantity: 8 },
      { external_id: 'NOT-IN-CATALOG', store_id: s1, stock_quantity: 1 },
    ]);
  });
});

describe('sync.stock orphans', () => {
  it('deactivates a pair that left the export in its store only; the other store of the product keeps its state', async () => {
    const sandbox = await startSandbox();
    const [s1, s2] = sandbox.storeIds;
    const { sync, exchanges } = syncOn(sandbox, freshPath());
    const known = sandbox.seed.products[2]!;
    await sync.stock([
      { external_id: known, store_id: s1!, stock_quantity: 1 },
      { external_id: known, store_id: s2!, stock_quantity: 2 },
    ]);
    expect((await sync.stock([{ external_id: known, store_id: s1!, stock_quantity: 1 }])).orphans).toBe(1);
    const orphans = await collect(sync.orphans('stock'));
    expect(orphans.map((o) => [o.external_id, o.store_ids])).toEqual([[known, [s2]]]);
    expect(await sync.deactivate('stock', orphans, { confirm: 1 })).toMatchObject({ deactivated: 1, errors: 0 });
    expect(sandbox.getProduct(known)?.stores[s2!]?.active).toBe(false);
    exchanges.length = 0;
    expect(await sync.stock([{ external_id: known, store_id: s1!, stock_quantity: 1 }])).toMatchObject({ unchanged: 1, sent: 0, orphans: 0 });
  });
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
}

describe('one SQLite file', () => {
  it('holds the inbox and the sync state side by side', async () => {
    const { sqliteStore } = await import('integration-sdk/inbox/sqlite');
    const sandbox = await startSandbox();
    const path = freshPath();
    const inbox = sqliteStore({ path });
    onCleanup(() => inbox.close());
    await inbox.migrate();
    const { sync } = syncOn(sandbox, path);
    expect((await sync.catalog(products(2))).created).toBe(2);
    expect((await sync.catalog(products(2))).unchanged).toBe(2);
    expect(await inbox.stats(Date.now())).toMatchObject({ pending: 0 });
  });
});
