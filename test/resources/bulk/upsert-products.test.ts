import { describe, expect, it } from 'vitest';
import { BulkOperationError, ConfigurationError, InvalidInputError, ResponseValidationError } from '../../../src/errors/index.ts';
import { CatalogResource } from '../../../src/resources/catalog.ts';
import type { ProductItem } from '../../../src/schemas/products.ts';
import { createFakeService, FORBIDDEN, product, STORE_A } from './fake-service.ts';

/** 1,234 items; repeats across batch boundaries, a repeat of an invalid item, invalid decimals. */
function bigInput() {
  const items: ProductItem[] = [];
  for (let i = 0; i < 1234; i += 1) items.push(product(i));
  items[99] = product(99, { stores: [{ store_id: STORE_A, stock_quantity: 1.2345 }] });
  items[150] = product(50); // repeat of index 50, one batch later
  items[300] = product(300, { stores: [{ store_id: STORE_A, stock_quantity: 0.1 + 0.2 }] });
  items[301] = product(301, { stores: [{ store_id: STORE_A, stock_quantity: 12.345 }] });
  items[420] = product(419); // repeat of the item just before
  items[600] = product(99); // repeat of an invalid first occurrence
  items[1200] = product(5); // repeat of an item eleven batches back
  return items;
}
const REJECTED = new Map([
  [99, 'stores[0].stock_quantity has 4 decimal places; at most 3 are kept and nothing is rounded'],
  [150, 'external_id is duplicated in batch (first at index 50); only the first occurrence is sent'],
  [300, 'stores[0].stock_quantity has 17 decimal places; at most 3 are kept and nothing is rounded'],
  [420, 'external_id is duplicated in batch (first at index 419); only the first occurrence is sent'],
  [600, 'external_id is duplicated in batch (first at index 99); only the first occurrence is sent'],
  [1200, 'external_id is duplicated in batch (first at index 5); only the first occurrence is sent'],
]);

function* fromIterable<T>(items: T[]): Iterable<T> {
  yield* items;
}
async function* fromAsyncIterable<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) {
    await Promise.resolve();
    yield item;
  }
}

describe('catalog.upsertProducts', () => {
  it('sends 1,234 items as the service would handle one batch: repeats and bad decimals stay home', async () => {
    const service = createFakeService({ catalog: ['SKU-0', 'SKU-1', 'SKU-2'] });
    const input = bigInput();
    const result = await new CatalogResource(service.requester).upsertProducts(input, { batchSize: 100 });

    const sendable = input.filter((_, index) => !REJECTED.has(index));
    expect(sendable).toHaveLength(1228);
    expect(service.requests).toHaveLength(13);
    service.requests.forEach((request, k) => {
      expect(request).toMatchObject({ method: 'POST', path: '/products/bulk', retry: 'safe' });
      expect(request.items).toEqual(sendable.slice(k * 100, (k + 1) * 100));
    });
    expect(service.requests[12]!.items).toHaveLength(28);
    const sent301 = service.requests.flatMap((r) => r.items).find((item) => item.external_id === 'SKU-301')!;
    expect(sent301.stores).toEqual([{ store_id: STORE_A, stock_quantity: 12.345 }]);

    expect(result.results).toHaveLength(1234);
    result.results.forEach((entry, index) => {
      expect(entry.index).toBe(index);
      expect(entry.external_id).toBe(input[index]!.external_id);
      const rejected = REJECTED.get(index);
      if (rejected) expect(entry).toEqual({ index, external_id: input[index]!.external_id, status: 'error', error: { code: 'VALIDATION_ERROR', message: rejected } });
      else expect(entry.status).toBe(index < 3 ? 'updated' : 'created');
    });
    expect(result.summary).toEqual({ created: 1225, updated: 3, errors: 6 });
    expect(result.sync_ids).toEqual(service.requests.map((_, k) => `sync-${k}`));
  });

  it.each([
    ['an Iterable', fromIterable],
    ['an AsyncIterable', fromAsyncIterable],
  ])('gives %s exactly what an array gets', async (_, wrap) => {
    const fromArray = createFakeService();
    const expected = await new CatalogResource(fromArray.requester).upsertProducts(bigInput(), { batchSize: 100 });
    const fromStream = createFakeService();
    const result = await new CatalogResource(fromStream.requester).upsertProducts(wrap(bigInput()), { batchSize: 100 });
    expect(fromStream.requests.map((r) => r.items)).toEqual(fromArray.requests.map((r) => r.items));
    expect(result).toEqual(expected);
  });

  it('sends nothing for an empty input and returns an empty result', async () => {
    const service = createFakeService();
    const catalog = new CatalogResource(service.requester);
    const empty = { sync_ids: [], summary: { created: 0, updated: 0, errors: 0 }, results: [] };
    expect(await catalog.upsertProducts([])).toEqual(empty);
    expect(await catalog.upsertProducts(fromAsyncIterable([]))).toEqual(empty);
    expect(service.requests).toHaveLength(0);
  });

  it('keeps and counts the service’s own item errors, at global indexes', async () => {
    const service = createFakeService();
    const items = [product(0), product(1), product(2, { stores: [{ store_id: FORBIDDEN, stock_quantity: 1 }] }), product(3)];
    const result = await new CatalogResource(service.requester).upsertProducts(items, { batchSize: 2 });
    expect(result.results[2]).toEqual({ index: 2, external_id: 'SKU-2', status: 'error', error: { code: 'FORBIDDEN_STORE', message: 'store outside the key scope' } });
    expect(result.summary).toEqual({ created: 3, updated: 0, errors: 1 });
  });

  it('passes the per-call options, and only those, to every batch', async () => {
    const service = createFakeService();
    const signal = new AbortController().signal;
    const options = { signal, timeoutMs: 1234, totalTimeoutMs: 5000, maxRetries: 2 };
    await new CatalogResource(service.requester).upsertProducts([0, 1, 2, 3, 4].map((i) => product(i)), { ...options, batchSize: 2, onProgress: () => {} });
    expect(service.requests).toHaveLength(3);
    for (const request of service.requests) expect(request.options).toStrictEqual(options);
  });

  it.each([
    [{ batchSize: 0 }, /batchSize must be an integer from 1 to 500/],
    [{ batchSize: 501 }, /batchSize must be an integer from 1 to 500.*got 501/],
    [{ batchSize: 2.5 }, /batchSize/],
    [{ batchSize: Number.NaN }, /batchSize/],
    [{ batchSize: '10' }, /batchSize.*got string/],
    [{ concurrency: 0 }, /concurrency must be an integer of 1 or more/],
    [{ concurrency: 1.5 }, /concurrency/],
  ])('rejects %j before any request', async (options, message) => {
    const service = createFakeService();
    const catalog = new CatalogResource(service.requester);
    await expect(catalog.upsertProducts([product(1)], options as never)).rejects.toThrow(ConfigurationError);
    await expect(catalog.upsertProducts([product(1)], options as never)).rejects.toThrow(message);
    expect(() => catalog.upsertBatches([product(1)], options as never)).toThrow(ConfigurationError);
    expect(service.requests).toHaveLength(0);
  });

  it('accepts the limits 1 and 500', async () => {
    const service = createFakeService();
    const catalog = new CatalogResource(service.requester);
    await catalog.upsertProducts([product(1), product(2)], { batchSize: 1 });
    await catalog.upsertProducts([product(3)], { batchSize: 500, concurrency: 64 });
    expect(service.requests.map((r) => r.items.length)).toEqual([1, 1, 1]);
  });

  it('refuses an input that is not a list of items, and bad per-call options, before any request', async () => {
    const service = createFakeService();
    const catalog = new CatalogResource(service.requester);
    await expect(catalog.upsertProducts('SKU-1' as never)).rejects.toThrow(InvalidInputError);
    await expect(catalog.upsertProducts({ external_id: 'SKU-1' } as never)).rejects.toThrow(/items: must be an array, an Iterable or an AsyncIterable/);
    await expect(catalog.upsertProducts([product(1)], { timeoutMs: -1 })).rejects.toThrow(InvalidInputError);
    expect(() => catalog.upsertBatches([product(1)], { maxRetries: 1.5 })).toThrow(/maxRetries/);
    expect(service.requests).toHaveLength(0);
  });

  it.each([
    ['too few results', (answer: { results: unknown[] }) => answer.results.pop(), /results: has 1 entries for the 2 items sent/],
    ['an index out of range', (answer: { results: { index: number }[] }) => (answer.results[1]!.index = 2), /results\[1\]\.index: is not the index of an item sent/],
    ['a repeated index', (answer: { results: { index: number }[] }) => (answer.results[1]!.index = 0), /results\[1\]\.index: repeats index 0/],
    ['indexes that point at the wrong items', (answer: { results: { index: number }[] }) => {
      answer.results[0]!.index = 1;
      answer.results[1]!.index = 0;
    }, /results\[0\]: is not about the item sent at index 1/],
  ])('never misattributes an answer with %s: the batch fails with ResponseValidationError', async (_, tamper, issue) => {
    const service = createFakeService({ tamper: (n, answer) => n === 1 && tamper(answer as never) });
    const error = await new CatalogResource(service.requester)
      .upsertProducts([0, 1, 2, 3].map((i) => product(i)), { batchSize: 2 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BulkOperationError);
    const { cause, partial } = error as BulkOperationError<{ results: { index: number }[] }>;
    expect(cause).toBeInstanceOf(ResponseValidationError);
    expect((cause as Error).message).toMatch(issue);
    expect(partial.results.map((r) => r.index)).toEqual([0, 1]);
  });

  it('places results answered out of order by their index', async () => {
    const service = createFakeService({ tamper: (_, answer) => answer.results.reverse() });
    const result = await new CatalogResource(service.requester).upsertProducts([0, 1, 2].map((i) => product(i)), { batchSize: 3 });
    expect(result.results.map((r) => [r.index, r.external_id])).toEqual([[0, 'SKU-0'], [1, 'SKU-1'], [2, 'SKU-2']]);
  });
});
