import { describe, expect, it } from 'vitest';
import { CatalogResource, type BatchResult } from '../../../src/resources/catalog.ts';
import type { Requester, RequestSpec } from '../../../src/transport/types.ts';
import { createFakeService, product, untyped } from './fake-service.ts';

async function collect(batches: AsyncIterable<BatchResult>): Promise<BatchResult[]> {
  const all: BatchResult[] = [];
  for await (const batch of batches) all.push(batch);
  return all;
}

const view = (batch: BatchResult) => ({ sync_id: batch.sync_id, summary: batch.summary, indexes: batch.results.map((r) => r.index) });

describe('catalog.upsertBatches', () => {
  it('yields windows in order; local rejections travel with the next batch; trailing ones get sync_id null', async () => {
    const service = createFakeService();
    // 2 and 5 are invalid, 6 repeats 0. Windows: [0,1] [2,3,4] [5,6].
    const items = [product(0), product(1), { external_id: 'SKU-2', name: '' }, product(3), product(4), untyped(null), product(0)];
    const windows = await collect(new CatalogResource(service.requester).upsertBatches(items, { batchSize: 2 }));
    expect(windows.map(view)).toEqual([
      { sync_id: 'sync-0', summary: { created: 2, updated: 0, errors: 0 }, indexes: [0, 1] },
      { sync_id: 'sync-1', summary: { created: 2, updated: 0, errors: 1 }, indexes: [2, 3, 4] },
      { sync_id: null, summary: { created: 0, updated: 0, errors: 2 }, indexes: [5, 6] },
    ]);
    expect(windows[2]!.results[1]).toEqual({
      index: 6,
      external_id: 'SKU-0',
      status: 'error',
      error: { code: 'VALIDATION_ERROR', message: 'external_id is duplicated in batch (first at index 0); only the first occurrence is sent' },
    });
    expect(service.requests.map((r) => r.items.map((i) => i.external_id))).toEqual([['SKU-0', 'SKU-1'], ['SKU-3', 'SKU-4']]);
  });

  it('puts the rejections after a batch that is not full into its window', async () => {
    const windows = await collect(new CatalogResource(createFakeService().requester).upsertBatches([product(0), untyped(null), untyped(null)], { batchSize: 2 }));
    expect(windows.map(view)).toEqual([{ sync_id: 'sync-0', summary: { created: 1, updated: 0, errors: 2 }, indexes: [0, 1, 2] }]);
  });

  it('yields nothing and sends nothing for an empty input', async () => {
    const service = createFakeService();
    expect(await collect(new CatalogResource(service.requester).upsertBatches([]))).toEqual([]);
    expect(await collect(new CatalogResource(service.requester).upsertBatches((function* () {})()))).toEqual([]);
    expect(service.requests).toHaveLength(0);
  });

  it('stops reading the input when the caller leaves the loop', async () => {
    let read = 0;
    function* items() {
      for (let i = 0; ; i += 1) {
        read += 1;
        yield product(i);
      }
    }
    for await (const batch of new CatalogResource(createFakeService().requester).upsertBatches(items(), { batchSize: 10 })) {
      expect(batch.sync_id).toBe('sync-0');
      break;
    }
    expect(read).toBeLessThanOrEqual(30);
  });

  it('streams 1,000,000 items reading ahead only what the batches in flight need', async () => {
    const total = 1_000_000;
    const batchSize = 500;
    const concurrency = 2;
    let read = 0;
    let maxAhead = 0;
    function* items() {
      for (let i = 0; i < total; i += 1) {
        read += 1;
        yield { external_id: `SKU-${i}` };
      }
    }
    // Answers like the service, without keeping anything.
    const requester: Requester = {
      async send<T>(spec: RequestSpec<T>): Promise<T> {
        const sent = (spec.body as { items: { external_id: string }[] }).items;
        const results = sent.map((item, index) => ({ index, external_id: item.external_id, status: 'created' }));
        return { sync_id: 's', summary: { created: sent.length, updated: 0, errors: 0 }, results } as T;
      },
    };
    let done = 0;
    let windows = 0;
    for await (const batch of new CatalogResource(requester).upsertBatches(items(), { batchSize, concurrency })) {
      expect(batch.results[0]!.index).toBe(done);
      done += batch.results.length;
      windows += 1;
      maxAhead = Math.max(maxAhead, read - done);
    }
    expect(done).toBe(total);
    expect(windows).toBe(total / batchSize);
    // At most `concurrency` windows in flight, as many waiting to be yielded, and the one being read.
    expect(maxAhead).toBeLessThanOrEqual((2 * concurrency + 1) * batchSize);
  }, 60_000);
});
