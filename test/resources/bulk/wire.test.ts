// The bulk routes as the public client sends them over the wire (paths, default batch size,
// PATCH /stock, a typed batch error); the engine's behaviours are tested in the other files here.
import { describe, expect, it } from 'vitest';
import { BulkOperationError, IntegrationClient } from 'integration-sdk';
import { BASE, KEY, KEY_SECRET, STORE, bulkOk, fail, ok, service, stockOk, type Answer } from '../../conformance/helpers.ts';

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

describe('an item error echoing the API key (a 200 answer)', () => {
  // As the service might quote a field, or a misbehaving proxy the header: raw, JSON-escaped, percent-encoded, and the secret alone.
  const echoes = [KEY, KEY.replace(/[a-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`), encodeURIComponent(KEY).replace(/_/g, '%5F'), KEY_SECRET];
  const itemError = (i: number) => ({ code: 'VALIDATION_ERROR', message: `field x-api-key=${echoes[i % echoes.length]} is not allowed` });
  /** A 200 whose every item failed with a message quoting the key; the text is written by hand so that escapes reach the client as they are. */
  const echoing: Answer = (seen) => {
    const items = (seen.body as { items: { external_id: string; store_id?: string }[] }).items;
    const results = items.map((item, index) => ({ index, external_id: item.external_id, ...(item.store_id ? { store_id: item.store_id } : {}), status: 'error', error: itemError(index) }));
    const text = JSON.stringify({ sync_id: 's1', summary: { created: 0, updated: 0, errors: items.length }, results }).replace(/\\\\u/g, '\\u');
    return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const leaks = (value: unknown) => {
    const text = JSON.stringify(value);
    return [KEY, KEY_SECRET, 'SuperSecret'].filter((secret) => text.includes(secret)).length + (text.includes('\\u0053uper') ? 1 : 0) + (text.includes('%5F') ? 1 : 0);
  };

  it('is scrubbed from upsertProducts, upsertBatches and stock.set results', async () => {
    const { client } = make(echoing);
    const products4 = products(4);
    const result = await client.catalog.upsertProducts(products4);
    expect(result.results.map((r) => r.error?.message)).toEqual(Array.from({ length: 4 }, () => 'field x-api-key=[redacted] is not allowed'));
    const batches = [];
    for await (const batch of client.catalog.upsertBatches(products4)) batches.push(batch);
    const stock = await client.stock.set(products4.map((p) => ({ external_id: p.external_id, store_id: STORE, stock_quantity: 1 })));
    expect(stock.results.every((r) => r.error?.message === 'field x-api-key=[redacted] is not allowed')).toBe(true);
    expect(leaks([result, batches, stock])).toBe(0);
  });
});
