// UUIDs compare without regard to letter case: an ERP that stores them upper case must not meet
// FORBIDDEN_STORE for a store its key does have, in the SDK's repeat rule nor in the sandbox.
import { describe, expect, test } from 'vitest';
import { clientFor, startSandbox } from './helpers.ts';

describe('store ids in upper case', () => {
  test('stock.set accepts an upper-case store id of the key and writes that store', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const storeId = sandbox.storeIds[0]!;
    await client.catalog.upsertProducts([{ external_id: 'CASE-1', name: 'Case', price: 1 }]);

    const result = await client.stock.set([{ external_id: 'CASE-1', store_id: storeId.toUpperCase(), stock_quantity: 4.5 }]);

    expect(result.results[0]).toMatchObject({ status: 'updated' });
    expect(sandbox.getProduct('CASE-1')?.stores[storeId]?.stock_quantity).toBe(4.5);
  });

  test('the one-store key still refuses another store, whatever its case', async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox, { apiKey: sandbox.keys.oneStore });
    await client.catalog.upsertProducts([{ external_id: 'CASE-2', name: 'Case', price: 1 }]);

    const result = await client.stock.set([{ external_id: 'CASE-2', store_id: sandbox.storeIds[1]!.toUpperCase(), stock_quantity: 1 }]);

    expect(result.results[0]?.error?.code).toBe('FORBIDDEN_STORE');
  });
});
