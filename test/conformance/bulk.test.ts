import { describe, expect, it } from 'vitest';
import { BulkOperationError, IntegrationClient, InternalServerError } from 'integration-sdk';
import { BASE, KEY, STORE, bulkOk, fail, service, stockOk, type Answer } from './helpers.ts';

const STORE2 = '1c9e9b63-4d6f-4e4a-8e1c-3c8e8f7c9f22';

function make(answer: Answer) {
  const s = service(answer);
  return { client: new IntegrationClient({ apiKey: KEY, baseUrl: BASE, fetch: s.fetch, rateLimit: false, maxRetries: 0 }), calls: s.calls };
}

const products = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ external_id: `SKU-${from + i}`, name: `P${from + i}`, price: 1 }));

describe('catalog.upsertProducts', () => {
  it('POST /products/bulk in batches of at most 500, global indexes, input order', async () => {
    const { client, calls } = make(bulkOk);
    const result = await client.catalog.upsertProducts(products(1201));
    expect(calls.map((c) => [c.method, c.url.pathname, c.body.items.length])).toEqual([
      ['POST', '/integration/v1/products/bulk', 500],
      ['POST', '/integration/v1/products/bulk', 500],
      ['POST', '/integration/v1/products/bulk', 201],
    ]);
    expect(result.sync_ids).toHaveLength(3);
    expect(result.summary).toEqual({ created: 1201, updated: 0, errors: 0 });
    expect(result.results).toHaveLength(1201);
    result.results.forEach((r, i) => expect(r).toEqual({ index: i, external_id: `SKU-${i}`, status: 'created' }));
  });

  it('batchSize and an AsyncIterable input', async () => {
    const { client, calls } = make(bulkOk);
    async function* stream() {
      for (const p of products(25)) yield p;
    }
    const progress: any[] = [];
    const result = await client.catalog.upsertProducts(stream(), { batchSize: 10, onProgress: (p) => progress.push({ ...p }) });
    expect(calls.map((c) => c.body.items.length)).toEqual([10, 10, 5]);
    expect(result.results.map((r) => r.index)).toEqual([...Array(25).keys()]);
    expect(progress).toHaveLength(3);
    expect(progress[2]).toMatchObject({ itemsDone: 25, batchesDone: 3, created: 25, updated: 0, errors: 0 });
    expect(progress[0].itemsTotal).toBeUndefined();
    expect(progress[0].batchesTotal).toBeUndefined();
  });

  it('an Iterable (generator) input', async () => {
    const { client } = make(bulkOk);
    function* gen() {
      yield* products(3);
    }
    const result = await client.catalog.upsertProducts(gen(), { batchSize: 2 });
    expect(result.results.map((r) => r.external_id)).toEqual(['SKU-0', 'SKU-1', 'SKU-2']);
  });

  it('cross-batch duplicates and local rejections: not sent, VALIDATION_ERROR, counted', async () => {
    const { client, calls } = make(bulkOk);
    const items = [
      { external_id: 'A', name: 'a', price: 1 },
      { external_id: 'B', name: 'b', price: 1 },
      { name: 'no id', price: 1 },
      { external_id: 'C', name: 'c', price: 1, stores: [{ store_id: STORE, stock_quantity: 1.2345 }] },
      { external_id: 'A', name: 'again', price: 2 },
      { external_id: 'D', name: 'd', price: 1, stores: [{ store_id: 'store-1', stock_quantity: 1 }] },
      { external_id: 'E', name: 'e', price: 1, stores: [{ store_id: STORE, stock_quantity: 1.125 }] },
    ];
    const progress: any[] = [];
    const result = await client.catalog.upsertProducts(items as never, { batchSize: 2, onProgress: (p) => progress.push({ ...p }) });
    const sent = calls.flatMap((c) => c.body.items.map((i: any) => i.external_id));
    expect(sent).toEqual(['A', 'B', 'E']);
    expect(calls[1]!.body.items[0].stores[0].stock_quantity).toBe(1.125);
    expect(result.results.map((r) => [r.index, r.status])).toEqual([
      [0, 'created'], [1, 'created'], [2, 'error'], [3, 'error'], [4, 'error'], [5, 'error'], [6, 'created'],
    ]);
    for (const i of [2, 3, 4, 5]) expect(result.results[i]!.error!.code).toBe('VALIDATION_ERROR');
    expect(result.results[4]!.error!.message).toMatch(/duplicated in batch/);
    expect(result.results[4]!.external_id).toBe('A');
    expect(result.summary).toEqual({ created: 3, updated: 0, errors: 4 });
    expect(result.sync_ids).toHaveLength(calls.length);
    expect(progress.at(-1)).toMatchObject({ itemsDone: 7, itemsTotal: 7, created: 3, errors: 4 });
  });

  it('maps batch-local index back to the global index even when the service answers out of order', async () => {
    const { client } = make((seen) => {
      const items = seen.body.items as { external_id: string }[];
      const results = items.map((item, index) => ({ index, external_id: item.external_id, status: index % 2 ? 'updated' : 'created' })).reverse();
      return Response.json({ sync_id: crypto.randomUUID(), summary: { created: 0, updated: 0, errors: 0 }, results });
    });
    const result = await client.catalog.upsertProducts(products(6), { batchSize: 3 });
    expect(result.results.map((r) => [r.index, r.external_id])).toEqual(products(6).map((p, i) => [i, p.external_id]));
    expect(result.summary).toEqual({ created: 4, updated: 2, errors: 0 });
  });

  it('a failing batch throws BulkOperationError with partial and cause', async () => {
    const { client } = make((seen, n) => (n === 2 ? fail(500, 'INTERNAL')(seen, n) : bulkOk(seen, n)));
    const error = await client.catalog.upsertProducts(products(5), { batchSize: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BulkOperationError);
    const bulk = error as BulkOperationError<any>;
    expect(bulk.cause).toBeInstanceOf(InternalServerError);
    expect(bulk.partial.results.map((r: any) => r.index)).toEqual([0, 1]);
    expect(bulk.partial.sync_ids).toHaveLength(1);
    expect(bulk.partial.summary).toEqual({ created: 2, updated: 0, errors: 0 });
  });

  it('concurrency keeps several batches in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const { client } = make(async (seen, n) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight -= 1;
      return bulkOk(seen, n);
    });
    const result = await client.catalog.upsertProducts(products(40), { batchSize: 5, concurrency: 3 });
    expect(peak).toBe(3);
    expect(result.results.map((r) => r.index)).toEqual([...Array(40).keys()]);
  });

  it('upsertBatches yields one window per batch with global indexes', async () => {
    const { client } = make(bulkOk);
    const windows = [];
    for await (const batch of client.catalog.upsertBatches([...products(3), { external_id: 'SKU-0' }, ...products(2, 3)], { batchSize: 2 })) windows.push(batch);
    const indexes = windows.flatMap((w) => w.results.map((r) => r.index));
    expect(indexes).toEqual([0, 1, 2, 3, 4, 5]);
    for (const w of windows) {
      expect(typeof w.sync_id).toBe('string');
      expect(w.summary.created + w.summary.updated + w.summary.errors).toBe(w.results.length);
    }
    expect(windows.flatMap((w) => w.results).find((r) => r.index === 3)).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR' } });
  });
});

describe('stock.set', () => {
  it('PATCH /stock, repeat rule on (external_id, store_id), price_override null kept', async () => {
    const { client, calls } = make(stockOk);
    const result = await client.stock.set([
      { external_id: 'A', store_id: STORE, stock_quantity: 1.5 },
      { external_id: 'A', store_id: STORE2, stock_quantity: 2 },
      { external_id: 'A', store_id: STORE, stock_quantity: 3 },
      { external_id: 'B', store_id: STORE, price_override: null },
      { external_id: 'C', store_id: STORE, stock_quantity: 0.0001 },
      { external_id: 'D', store_id: 'nope', stock_quantity: 1 },
    ]);
    expect(calls[0]!.method).toBe('PATCH');
    expect(calls[0]!.url.pathname).toBe('/integration/v1/stock');
    expect(calls[0]!.body.items).toEqual([
      { external_id: 'A', store_id: STORE, stock_quantity: 1.5 },
      { external_id: 'A', store_id: STORE2, stock_quantity: 2 },
      { external_id: 'B', store_id: STORE, price_override: null },
    ]);
    expect(result.results.map((r) => [r.index, r.status])).toEqual([
      [0, 'updated'], [1, 'updated'], [2, 'error'], [3, 'updated'], [4, 'error'], [5, 'error'],
    ]);
    expect(result.results[2]!.error).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(result.summary).toEqual({ updated: 3, errors: 3 });
    expect(result.sync_ids).toHaveLength(1);
  });

  it('batches of 500 and progress', async () => {
    const { client, calls } = make(stockOk);
    const items = Array.from({ length: 700 }, (_, i) => ({ external_id: `S${i}`, store_id: STORE, stock_quantity: i }));
    const progress: any[] = [];
    const result = await client.stock.set(items, { onProgress: (p) => progress.push({ ...p }) });
    expect(calls.map((c) => c.body.items.length)).toEqual([500, 200]);
    expect(progress.map((p) => [p.itemsDone, p.itemsTotal, p.batchesDone, p.batchesTotal, p.updated, p.errors])).toEqual([
      [500, 700, 1, 2, 500, 0],
      [700, 700, 2, 2, 700, 0],
    ]);
    expect(result.summary).toEqual({ updated: 700, errors: 0 });
  });

  it('a failing batch throws BulkOperationError', async () => {
    const { client } = make(fail(403, 'INSUFFICIENT_SCOPE', { required_scope: 'stock:write', granted_scopes: [] }));
    const error = await client.stock.set([{ external_id: 'A', store_id: STORE, stock_quantity: 1 }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BulkOperationError);
    expect((error as BulkOperationError<any>).partial).toEqual({ sync_ids: [], summary: { updated: 0, errors: 0 }, results: [] });
  });
});
