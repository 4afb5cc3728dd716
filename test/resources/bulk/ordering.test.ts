import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CatalogResource } from '../../../src/resources/catalog.ts';
import { createFakeService, flush, products } from './fake-service.ts';

const indexes = (results: { index: number }[]) => results.map((r) => r.index);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('concurrency with answers arriving out of order (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const delays = [300, 100, 200, 50, 10, 30];

  it('upsertProducts keeps input order and at most 3 batches in flight', async () => {
    const service = createFakeService({ delayMs: (n) => delays[n] ?? 0 });
    const progress: number[] = [];
    const pending = new CatalogResource(service.requester).upsertProducts(products(18), {
      batchSize: 3,
      concurrency: 3,
      onProgress: (p) => progress.push(p.itemsDone),
    });
    await vi.advanceTimersByTimeAsync(1000);
    const result = await pending;
    expect(service.answered[0]).toBe(1);
    expect(service.answered.at(-1)).toBe(0);
    expect(service.maxInFlight).toBe(3);
    expect(indexes(result.results)).toEqual(range(18));
    expect(result.results.map((r) => r.external_id)).toEqual(products(18).map((p) => p.external_id));
    expect(result.sync_ids).toEqual(['sync-0', 'sync-1', 'sync-2', 'sync-3', 'sync-4', 'sync-5']);
    expect(progress).toEqual([3, 6, 9, 12, 15, 18]);
  });

  it('upsertBatches yields windows in input order', async () => {
    const service = createFakeService({ delayMs: (n) => delays[n] ?? 0 });
    const windows: { sync_id: string | null; results: { index: number }[] }[] = [];
    const done = (async () => {
      for await (const batch of new CatalogResource(service.requester).upsertBatches(products(18), { batchSize: 3, concurrency: 3 })) windows.push(batch);
    })();
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(service.answered).not.toEqual(range(6));
    expect(windows.map((w) => w.sync_id)).toEqual(['sync-0', 'sync-1', 'sync-2', 'sync-3', 'sync-4', 'sync-5']);
    expect(windows.flatMap((w) => indexes(w.results))).toEqual(range(18));
  });
});

describe('holding answers by hand', () => {
  it('yields nothing until the first batch answers, then everything that waited', async () => {
    const service = createFakeService({ manual: true });
    const yielded: (string | null)[] = [];
    const done = (async () => {
      for await (const batch of new CatalogResource(service.requester).upsertBatches(products(6), { batchSize: 2, concurrency: 3 })) yielded.push(batch.sync_id);
    })();
    await flush();
    expect(service.requests).toHaveLength(3);
    service.release(2);
    service.release(1);
    await flush();
    expect(yielded).toEqual([]);
    service.release(0);
    await done;
    expect(yielded).toEqual(['sync-0', 'sync-1', 'sync-2']);
  });

  it('starts a new batch as soon as one slot frees up', async () => {
    const service = createFakeService({ manual: true });
    const pending = new CatalogResource(service.requester).upsertProducts(products(8), { batchSize: 2, concurrency: 2 });
    await flush();
    expect(service.requests).toHaveLength(2);
    service.release(1);
    await flush();
    expect(service.requests).toHaveLength(3);
    for (const n of [0, 2]) service.release(n);
    await flush();
    service.release(3);
    expect(indexes((await pending).results)).toEqual(range(8));
  });
});
