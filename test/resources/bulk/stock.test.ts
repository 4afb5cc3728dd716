import { describe, expect, it } from 'vitest';
import { BulkOperationError, InternalServerError } from '../../../src/errors/index.ts';
import { StockResource, type StockResult } from '../../../src/resources/stock.ts';
import { createFakeService, FORBIDDEN, STORE_A, STORE_B } from './fake-service.ts';

describe('stock.set', () => {
  it('sends absolute values with PATCH /stock, keeping price_override null', async () => {
    const service = createFakeService({ catalog: ['SKU-1'] });
    const result = await new StockResource(service.requester).set([
      { external_id: 'SKU-1', store_id: STORE_A, stock_quantity: 12.345, price_override: null },
      { external_id: 'SKU-1', store_id: STORE_B, active: false },
    ]);
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]).toMatchObject({ method: 'PATCH', path: '/stock', retry: 'safe' });
    // The recorded items went through JSON: the key is there, with null.
    expect(service.requests[0]!.items).toEqual([
      { external_id: 'SKU-1', store_id: STORE_A, stock_quantity: 12.345, price_override: null },
      { external_id: 'SKU-1', store_id: STORE_B, active: false },
    ]);
    expect(result).toEqual({
      sync_ids: ['sync-0'],
      summary: { updated: 2, errors: 0 },
      results: [
        { index: 0, external_id: 'SKU-1', store_id: STORE_A, status: 'updated' },
        { index: 1, external_id: 'SKU-1', store_id: STORE_B, status: 'updated' },
      ],
    });
  });

  it('rejects a repeated (external_id, store_id) pair, in any letter case and across batches, but not another store', async () => {
    const service = createFakeService({ catalog: ['SKU-1', 'SKU-2'] });
    const result = await new StockResource(service.requester).set(
      [
        { external_id: 'SKU-1', store_id: STORE_A, stock_quantity: 5 },
        { external_id: 'SKU-1', store_id: STORE_B, stock_quantity: 6 },
        { external_id: 'SKU-2', store_id: STORE_A, stock_quantity: 7 },
        { external_id: 'SKU-1', store_id: STORE_A.toUpperCase(), stock_quantity: 8 },
      ],
      { batchSize: 2 },
    );
    expect(service.requests.map((r) => r.items.map((i) => i.stock_quantity))).toEqual([[5, 6], [7]]);
    expect(result.results[3]).toEqual({
      index: 3,
      external_id: 'SKU-1',
      store_id: STORE_A.toUpperCase(),
      status: 'error',
      error: {
        code: 'VALIDATION_ERROR',
        message: 'external_id and store_id are duplicated in batch (first at index 0): two absolute values for one store in one call; only the first occurrence is sent',
      },
    });
    expect(result.summary).toEqual({ updated: 3, errors: 1 });
  });

  it('rejects locally an item that sets nothing or has no valid store, and keeps the service’s item errors', async () => {
    const service = createFakeService({ catalog: ['SKU-1'] });
    const result = await new StockResource(service.requester).set([
      { external_id: 'SKU-1', store_id: STORE_A },
      { external_id: 'SKU-1', stock_quantity: 1 } as never,
      { external_id: 'SKU-404', store_id: STORE_A, stock_quantity: 1 },
      { external_id: 'SKU-1', store_id: FORBIDDEN, price_override: 3 },
      { external_id: 'SKU-1', store_id: STORE_B, stock_quantity: 0.0001 },
    ]);
    expect(service.requests[0]!.items.map((i) => i.external_id)).toEqual(['SKU-404', 'SKU-1']);
    expect(result.results.map((r) => [r.index, r.store_id, r.error?.code])).toEqual([
      [0, STORE_A, 'VALIDATION_ERROR'],
      [1, '', 'VALIDATION_ERROR'],
      [2, STORE_A, 'PRODUCT_NOT_FOUND'],
      [3, FORBIDDEN, 'FORBIDDEN_STORE'],
      [4, STORE_B, 'VALIDATION_ERROR'],
    ]);
    expect(result.results[0]!.error?.message).toBe('the item sets nothing: give at least one of stock_quantity, price_override, active');
    expect(result.summary).toEqual({ updated: 0, errors: 5 });
  });

  it('throws BulkOperationError when a batch fails, with the stock results of the others', async () => {
    const cause = new InternalServerError({ status: 500, code: 'INTERNAL', message: 'boom', requestMethod: 'PATCH', requestPath: '/integration/v1/stock' });
    const service = createFakeService({ catalog: ['SKU-1'], failRequest: (n) => (n === 1 ? cause : undefined) });
    const items = [STORE_A, STORE_B, '33333333-3333-4333-8333-333333333333'].map((store_id) => ({ external_id: 'SKU-1', store_id, active: true }));
    const error = (await new StockResource(service.requester).set(items, { batchSize: 1, concurrency: 2 }).catch((e: unknown) => e)) as BulkOperationError<StockResult>;
    expect(error).toBeInstanceOf(BulkOperationError);
    expect(error.cause).toBe(cause);
    expect(error.partial).toEqual({
      sync_ids: ['sync-0'],
      summary: { updated: 1, errors: 0 },
      results: [{ index: 0, external_id: 'SKU-1', store_id: STORE_A, status: 'updated' }],
    });
    expect(error.message).toMatch(/^PATCH \/stock: the batch of item 1 failed after its retries/);
  });
});
