import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { BulkUpsertResponseSchema } from '../../src/schemas/products.ts';
import { api } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox({ rate: false });
});
afterEach(() => sandbox.close());

const bulk = (items: unknown[], key?: string) => api(sandbox, key)('POST', '/products/bulk', { items });
const product = (external_id: string, extra: Record<string, unknown> = {}) => ({ external_id, name: `Product ${external_id}`, price: 9.9, ...extra });

describe('POST /products/bulk', () => {
  test('creates, then updates by external_id, with a summary matching the schema', async () => {
    const first = await bulk([product('P1'), product('P2')]);
    expect(first.status).toBe(200);
    expect(BulkUpsertResponseSchema.safeParse(first.body).success).toBe(true);
    expect(first.body.summary).toEqual({ created: 2, updated: 0, errors: 0 });
    expect(first.body.results).toEqual([{ index: 0, external_id: 'P1', status: 'created' }, { index: 1, external_id: 'P2', status: 'created' }]);
    const second = await bulk([{ external_id: 'P1', price: 12 }]);
    expect(second.body.results[0]).toEqual({ index: 0, external_id: 'P1', status: 'updated' });
    expect(sandbox.getProduct('P1')).toMatchObject({ name: 'Product P1', price: 12 });
  });

  test('500 items pass; 501 are refused as a whole with 400 and nothing is written', async () => {
    const items = Array.from({ length: 501 }, (_, i) => product(`N${i}`));
    const refused = await bulk(items);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.details).toEqual([{ path: 'items', message: expect.stringContaining('500') }]);
    expect(sandbox.getProduct('N0')).toBeUndefined();
    const accepted = await bulk(items.slice(0, 500));
    expect(accepted.body.summary.created).toBe(500);
  });

  test('a repeated external_id: the first occurrence is processed, each repeat is an item error', async () => {
    const answer = await bulk([product('D', { price: 1 }), product('X'), product('D', { price: 2 }), product('D', { price: 3 })]);
    expect(answer.body.summary).toEqual({ created: 2, updated: 0, errors: 2 });
    expect(answer.body.results[2]).toMatchObject({ index: 2, external_id: 'D', status: 'error', error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('duplicated') } });
    expect(answer.body.results[3].status).toBe('error');
    expect(sandbox.getProduct('D')?.price).toBe(1);
  });

  test('a gtin of 5 characters or fewer is stored as null, a longer one is kept', async () => {
    await bulk([product('G5', { gtin: '12345' }), product('G6', { gtin: '123456' }), product('G0', { gtin: '' })]);
    expect(sandbox.getProduct('G5')?.gtin).toBeNull();
    expect(sandbox.getProduct('G6')?.gtin).toBe('123456');
    expect(sandbox.getProduct('G0')?.gtin).toBeNull();
  });

  test('stock_quantity keeps 3 decimals exactly; a 4th decimal fails the item, not rounded', async () => {
    const store_id = sandbox.storeIds[0];
    const answer = await bulk([
      product('W3', { stores: [{ store_id, stock_quantity: 1.125 }] }),
      product('W4', { stores: [{ store_id, stock_quantity: 1.1255 }] }),
    ]);
    expect(answer.body.results[0].status).toBe('created');
    expect(sandbox.getProduct('W3')?.stores[store_id ?? '']?.stock_quantity).toBe(1.125);
    expect(answer.body.results[1]).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('decimal') } });
    expect(sandbox.getProduct('W4')).toBeUndefined();
  });

  test('name and price are required for new ids only; external_id is at most 100 characters', async () => {
    const answer = await bulk([
      { external_id: 'NEW1', price: 1 },
      { external_id: 'NEW2', name: 'no price' },
      { external_id: 'SKU-1001', category: 'Bebidas' },
      product('x'.repeat(100)),
      product('y'.repeat(101)),
      { name: 'no id', price: 1 },
      product('NEG', { price: -1 }),
    ]);
    expect(answer.body.results.map((r: { status: string }) => r.status)).toEqual(['error', 'error', 'updated', 'created', 'error', 'error', 'error']);
    expect(answer.body.results[0].error.message).toContain('name');
    expect(answer.body.results[1].error.message).toContain('price');
    expect(answer.body.results[4].error.message).toContain('100');
    expect(answer.body.results[5].external_id).toBe('');
  });

  test('a forbidden store fails the whole item with FORBIDDEN_STORE and no side effect', async () => {
    const [mine, other] = sandbox.storeIds;
    const answer = await bulk([
      product('F1', { stores: [{ store_id: mine, stock_quantity: 5 }, { store_id: other, stock_quantity: 7 }] }),
      product('F2', { stores: [{ store_id: mine, stock_quantity: 5 }] }),
      { external_id: 'SKU-1001', name: 'renamed', stores: [{ store_id: other, active: false }] },
      product('F3', { stores: [{ store_id: '00000000-0000-4000-8000-000000000000' }] }),
    ], sandbox.keys.oneStore);
    expect(answer.body.summary).toEqual({ created: 1, updated: 0, errors: 3 });
    expect(answer.body.results[0]).toMatchObject({ status: 'error', error: { code: 'FORBIDDEN_STORE' } });
    expect(answer.body.results[3].error.code).toBe('FORBIDDEN_STORE');
    expect(sandbox.getProduct('F1')).toBeUndefined();
    expect(sandbox.getProduct('SKU-1001')?.name).toBe('Café torrado 500 g');
    expect(sandbox.getProduct('F2')?.stores[mine ?? '']?.stock_quantity).toBe(5);
  });

  test('a store whose write fails gives STORE_WRITE_FAILED for the item', async () => {
    const [a, b] = sandbox.storeIds;
    sandbox.setStoreWriteFailure(b ?? '', true);
    const answer = await bulk([product('S1', { stores: [{ store_id: a, stock_quantity: 1 }, { store_id: b, stock_quantity: 2 }] })]);
    expect(answer.body.results[0].error.code).toBe('STORE_WRITE_FAILED');
    expect(Object.keys(sandbox.getProduct('S1')?.stores ?? {})).toEqual([a]);
  });

  test('a body without an items array is 400 VALIDATION_ERROR with a path', async () => {
    for (const body of [{}, { items: 'x' }, []]) {
      const answer = await api(sandbox)('POST', '/products/bulk', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.details[0]).toHaveProperty('path');
    }
  });
});
