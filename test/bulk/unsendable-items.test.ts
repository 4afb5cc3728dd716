// Issue 14 item 9: what JSON cannot carry faithfully fails its own item, never its batch, and what
// is sent is exactly what was checked.
import { describe, expect, it } from 'vitest';
import { CatalogResource } from '../../src/resources/catalog.ts';
import type { ProductItem } from '../../src/schemas/products.ts';
import { createFakeService, product, STORE_A } from './fake-service.ts';

const cycle: Record<string, unknown> = { name: 'loop' };
cycle.self = cycle;

describe('items JSON cannot carry are that item\'s VALIDATION_ERROR', () => {
  it.each([
    ['a BigInt in an unknown field', { erp: { id: 10n } }, /BigInt/],
    ['a cycle in an unknown field', { erp: cycle }, /circular/],
    ['NaN deep inside', { erp: { weights: [1, Number.NaN] } }, /NaN or Infinity/],
    ['Infinity deep inside', { stores: [{ store_id: STORE_A, stock_quantity: 1, extra: { x: Number.POSITIVE_INFINITY } }] }, /NaN or Infinity/],
  ])('%s: the other 499 items of the batch are still sent', async (_name, extra, message) => {
    const service = createFakeService();
    const input = Array.from({ length: 500 }, (_, i) => product(i));
    input[123] = product(123, extra as never);
    const result = await new CatalogResource(service.requester).upsertProducts(input);
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]!.items).toHaveLength(499);
    expect(service.requests[0]!.items.map((item) => item.external_id)).not.toContain('SKU-123');
    expect(result.results[123]).toMatchObject({ index: 123, status: 'error', error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(message) } });
    expect(result.results.filter((r) => r.status !== 'error')).toHaveLength(499);
  });
});

describe('a toJSON cannot replace the checked values', () => {
  it('an item whose toJSON swaps in invalid decimals is checked as sent, and rejected', async () => {
    const service = createFakeService();
    const sneaky = { ...product(1), toJSON: () => ({ external_id: 'SKU-1', stores: [{ store_id: STORE_A, stock_quantity: 1.23456 }] }) };
    const result = await new CatalogResource(service.requester).upsertProducts([product(0), sneaky as ProductItem]);
    expect(result.results[1]).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR' } });
    expect(service.requests.flatMap((r) => r.items)).toHaveLength(1);
  });

  it('a nested toJSON is applied once and the result is what goes on the wire', async () => {
    const service = createFakeService();
    const store = { store_id: STORE_A, stock_quantity: 2, toJSON() { return { store_id: STORE_A, stock_quantity: 3 }; } };
    await new CatalogResource(service.requester).upsertProducts([product(0, { stores: [store] as never })]);
    const sent = service.requests[0]!.items[0]!;
    expect(sent.stores).toEqual([{ store_id: STORE_A, stock_quantity: 3 }]);
    expect(typeof (sent.stores as { toJSON?: unknown }[])[0]!.toJSON).toBe('undefined');
  });
});
