import { describe, expect, it } from 'vitest';
import { CatalogResource, type BulkProgress } from '../../../src/resources/catalog.ts';
import { StockResource, type StockProgress } from '../../../src/resources/stock.ts';
import { createFakeService, product, STORE_A, untyped } from './fake-service.ts';

// Item 2 is rejected locally; with batchSize 3 the windows are [0–3] (sends 0, 1, 3) and [4–6].
const items = () => [product(0), product(1), untyped({ external_id: 'SKU-2', price: Number.NaN }), product(3), product(4), product(5), product(6)];

async function* stream<T>(list: T[]) {
  yield* list;
}

describe('onProgress', () => {
  it('reports after every batch, with totals for an array', async () => {
    const events: BulkProgress[] = [];
    await new CatalogResource(createFakeService({ catalog: ['SKU-0'] }).requester).upsertProducts(items(), { batchSize: 3, onProgress: (p) => events.push(p) });
    expect(events).toEqual([
      { itemsDone: 4, itemsTotal: 7, batchesDone: 1, batchesTotal: 2, created: 2, updated: 1, errors: 1 },
      { itemsDone: 7, itemsTotal: 7, batchesDone: 2, batchesTotal: 2, created: 5, updated: 1, errors: 1 },
    ]);
  });

  it('leaves the totals undefined for a stream', async () => {
    const events: BulkProgress[] = [];
    await new CatalogResource(createFakeService().requester).upsertProducts(stream(items()), { batchSize: 3, onProgress: (p) => events.push(p) });
    expect(events).toEqual([
      { itemsDone: 4, itemsTotal: undefined, batchesDone: 1, batchesTotal: undefined, created: 3, updated: 0, errors: 1 },
      { itemsDone: 7, itemsTotal: undefined, batchesDone: 2, batchesTotal: undefined, created: 6, updated: 0, errors: 1 },
    ]);
  });

  it('also reports a trailing window of local rejections, which is not a batch', async () => {
    const events: BulkProgress[] = [];
    const list = [product(0), product(1), product(0), untyped({ external_id: 'x'.repeat(101) })];
    await new CatalogResource(createFakeService().requester).upsertProducts(list, { batchSize: 2, onProgress: (p) => events.push(p) });
    expect(events.map((e) => [e.itemsDone, e.itemsTotal, e.batchesDone, e.batchesTotal, e.errors])).toEqual([
      [2, 4, 1, 1, 0],
      [4, 4, 1, 1, 2],
    ]);
  });

  it('counts stock with updated and errors only', async () => {
    const events: StockProgress[] = [];
    const stockItems = [
      { external_id: 'SKU-1', store_id: STORE_A, stock_quantity: 1 },
      { external_id: 'SKU-404', store_id: STORE_A, stock_quantity: 1 },
      { external_id: 'SKU-1', store_id: STORE_A },
    ];
    await new StockResource(createFakeService({ catalog: ['SKU-1'] }).requester).set(stockItems, { onProgress: (p) => events.push(p) });
    expect(events).toEqual([{ itemsDone: 3, itemsTotal: 3, batchesDone: 1, batchesTotal: 1, updated: 1, errors: 2 }]);
  });

  it('is not called for an empty input', async () => {
    const events: BulkProgress[] = [];
    await new CatalogResource(createFakeService().requester).upsertProducts([], { onProgress: (p) => events.push(p) });
    expect(events).toEqual([]);
  });
});
