// Store ids compare without regard to letter case (see state.ts canonicalStoreId): the bulk upsert
// must treat an upper-case store id like its lower-case form everywhere, not only in the scope check.
import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { api } from './helpers.ts';

let sandbox: Sandbox;
afterEach(async () => {
  await sandbox.close();
});

describe('POST /products/bulk with upper-case store ids', () => {
  test('a failing store fails the item whatever the case of its id', async () => {
    sandbox = await createSandbox({ rate: false });
    const storeId = sandbox.storeIds[1]!;
    sandbox.setStoreWriteFailure(storeId, true);
    const answer = await api(sandbox)('POST', '/products/bulk', {
      items: [{ external_id: 'CASE-W', name: 'Case', price: 1, stores: [{ store_id: storeId.toUpperCase(), stock_quantity: 2 }] }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.results[0]).toMatchObject({ status: 'error', error: { code: 'STORE_WRITE_FAILED' } });
    expect(sandbox.getProduct('CASE-W')?.stores[storeId]).toBeUndefined();
  });

  test('the same store twice in one item, in two cases, is a repeat', async () => {
    sandbox = await createSandbox({ rate: false });
    const storeId = sandbox.storeIds[0]!;
    const answer = await api(sandbox)('POST', '/products/bulk', {
      items: [{ external_id: 'CASE-R', name: 'Case', price: 1, stores: [{ store_id: storeId, stock_quantity: 1 }, { store_id: storeId.toUpperCase(), stock_quantity: 2 }] }],
    });
    expect(answer.body.results[0]).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR' } });
    expect(sandbox.getProduct('CASE-R')).toBeUndefined();
  });
});
