import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { StockResponseSchema } from '../../src/schemas/stock.ts';
import { api } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox({ rate: false });
});
afterEach(() => sandbox.close());

const patch = (items: unknown[], key?: string) => api(sandbox, key)('PATCH', '/stock', { items });

describe('PATCH /stock', () => {
  test('sets absolute values per store and answers the stock summary', async () => {
    const store_id = sandbox.storeIds[1] ?? '';
    const answer = await patch([{ external_id: 'SKU-1002', store_id, stock_quantity: 0.75, price_override: 45.5, active: true }]);
    expect(answer.status).toBe(200);
    expect(StockResponseSchema.safeParse(answer.body).success).toBe(true);
    expect(answer.body.summary).toEqual({ updated: 1, errors: 0 });
    expect(answer.body.results).toEqual([{ index: 0, external_id: 'SKU-1002', store_id, status: 'updated' }]);
    expect(sandbox.getProduct('SKU-1002')?.stores[store_id]).toEqual({ stock_quantity: 0.75, price_override: 45.5, active: true });
  });

  test('price_override null removes the per-store price; absent fields keep their value', async () => {
    const store_id = sandbox.storeIds[0] ?? '';
    await patch([{ external_id: 'SKU-1001', store_id, price_override: 19.9 }]);
    expect(sandbox.getProduct('SKU-1001')?.stores[store_id]?.price_override).toBe(19.9);
    await patch([{ external_id: 'SKU-1001', store_id, price_override: null }]);
    expect(sandbox.getProduct('SKU-1001')?.stores[store_id]).toEqual({ stock_quantity: 12, price_override: null, active: true });
  });

  test('item errors: PRODUCT_NOT_FOUND, FORBIDDEN_STORE, nothing to set, too many decimals', async () => {
    const [mine, other] = sandbox.storeIds;
    const answer = await patch([
      { external_id: 'NOPE', store_id: mine, stock_quantity: 1 },
      { external_id: 'SKU-1001', store_id: other, stock_quantity: 1 },
      { external_id: 'SKU-1001', store_id: mine },
      { external_id: 'SKU-1001', store_id: mine, stock_quantity: 0.0001 },
      { external_id: 'SKU-1001', store_id: mine, stock_quantity: 2.5 },
    ], sandbox.keys.oneStore);
    expect(answer.body.results.map((r: { error?: { code: string } }) => r.error?.code ?? 'ok')).toEqual(['PRODUCT_NOT_FOUND', 'FORBIDDEN_STORE', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'ok']);
    expect(answer.body.summary).toEqual({ updated: 1, errors: 4 });
    expect(sandbox.getProduct('SKU-1001')?.stores[other ?? '']).toBeUndefined();
    expect(sandbox.getProduct('NOPE')).toBeUndefined();
  });

  test('more than 500 items is 400 for the whole request', async () => {
    const items = Array.from({ length: 501 }, () => ({ external_id: 'SKU-1001', store_id: sandbox.storeIds[0], stock_quantity: 99 }));
    const answer = await patch(items);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    expect(sandbox.getProduct('SKU-1001')?.stores[sandbox.storeIds[0] ?? '']?.stock_quantity).toBe(12);
  });

  test('a failing store write is STORE_WRITE_FAILED', async () => {
    const store_id = sandbox.storeIds[0] ?? '';
    sandbox.setStoreWriteFailure(store_id, true);
    const answer = await patch([{ external_id: 'SKU-1001', store_id, stock_quantity: 1 }]);
    expect(answer.body.results[0].error.code).toBe('STORE_WRITE_FAILED');
  });
});
