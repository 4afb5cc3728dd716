// The local item checks: each route's rules; what JSON cannot carry faithfully is one item's
// VALIDATION_ERROR, never its batch's failure nor a silent change; and what is sent is exactly what
// was checked (issue 14, item 9).
import { describe, expect, it } from 'vitest';
import { decimalPlaces, productProblem, stockProblem } from '../../../src/resources/bulk/item-checks.ts';
import { CatalogResource } from '../../../src/resources/catalog.ts';
import { StockResource } from '../../../src/resources/stock.ts';
import type { StockItem } from '../../../src/schemas/stock.ts';
import { createFakeService, product, STORE_A, untyped } from './fake-service.ts';

describe('decimalPlaces counts what JSON would carry', () => {
  it.each([
    [12, 0],
    [12.345, 3],
    [-0.125, 3],
    [0.1 + 0.2, 17],
    [1.2345, 4],
    [1e-7, 7],
    [1.5e-10, 11],
    [1e21, 0],
    [1.23456e25, 0],
  ])('%s has %i', (value, places) => {
    expect(decimalPlaces(value)).toBe(places);
  });
});

describe('product items', () => {
  const valid = { external_id: 'SKU-1', name: 'Coffee', price: 9.9 };

  it('accepts a minimal update and a full item', () => {
    expect(productProblem({ external_id: 'SKU-1' })).toBeUndefined();
    expect(productProblem({ ...valid, gtin: '123', category: 'Food', stores: [{ store_id: STORE_A.toUpperCase(), stock_quantity: 12.345, price_override: 8, active: false }] })).toBeUndefined();
  });

  it.each([
    [null, 'the item must be an object, got null'],
    [['x'], 'the item must be an object, got an array'],
    [{ name: 'x' }, 'external_id is missing'],
    [{ external_id: '' }, 'external_id is empty'],
    [{ external_id: 42 }, 'external_id must be a string, got a number'],
    [{ external_id: 'x'.repeat(101) }, 'external_id has 101 characters; at most 100 are allowed'],
    [{ ...valid, name: '' }, 'name is empty'],
    [{ ...valid, name: 'n'.repeat(256) }, 'name has 256 characters; at most 255 are allowed'],
    [{ ...valid, price: -1 }, 'price is -1; it must be 0 or more'],
    [{ ...valid, price: Number.NaN }, 'price is NaN, which JSON would send as null'],
    [{ ...valid, price: '9.90' }, 'price must be a number, got a string'],
    [{ ...valid, stores: {} }, 'stores must be an array, got object'],
    [{ ...valid, stores: [{ store_id: STORE_A }, { store_id: STORE_A, stock_quantity: 1.2345 }] }, 'stores[1].stock_quantity has 4 decimal places; at most 3 are kept and nothing is rounded'],
    [{ ...valid, stores: [{ store_id: STORE_A, stock_quantity: 0.1 + 0.2 }] }, 'stores[0].stock_quantity has 17 decimal places; at most 3 are kept and nothing is rounded'],
    [{ ...valid, stores: [{ store_id: STORE_A, stock_quantity: Infinity }] }, 'stores[0].stock_quantity is Infinity, which JSON would send as null'],
    [{ ...valid, stores: [{ store_id: 'store-1' }] }, 'stores[0].store_id is not a UUID (8-4-4-4-12 hexadecimal digits)'],
    [{ ...valid, stores: [{ stock_quantity: 1 }] }, 'stores[0].store_id is missing'],
    [{ ...valid, stores: [{ store_id: STORE_A, active: 'yes' }] }, 'stores[0].active must be a boolean, got a string'],
  ])('rejects %j', (item, message) => {
    expect(productProblem(item)).toBe(message);
  });

  it('counts characters as code points, so 100 emoji are a valid external_id', () => {
    expect(productProblem({ external_id: '🍎'.repeat(100) })).toBeUndefined();
    expect(productProblem({ external_id: '🍎'.repeat(101) })).toBe('external_id has 101 characters; at most 100 are allowed');
  });
});

describe('stock items', () => {
  const valid = { external_id: 'SKU-1', store_id: STORE_A };

  it('accepts each single value, and price_override null', () => {
    expect(stockProblem({ ...valid, stock_quantity: -2.5 })).toBeUndefined();
    expect(stockProblem({ ...valid, price_override: null })).toBeUndefined();
    expect(stockProblem({ ...valid, active: false })).toBeUndefined();
  });

  it.each([
    [{ ...valid }, 'the item sets nothing: give at least one of stock_quantity, price_override, active'],
    [{ external_id: 'SKU-1', stock_quantity: 1 }, 'store_id is missing'],
    [{ ...valid, store_id: 'abc', stock_quantity: 1 }, 'store_id is not a UUID (8-4-4-4-12 hexadecimal digits)'],
    [{ ...valid, stock_quantity: 1.0005 }, 'stock_quantity has 4 decimal places; at most 3 are kept and nothing is rounded'],
    [{ ...valid, price_override: -0.01 }, 'price_override is -0.01; it must be 0 or more'],
    [{ ...valid, price_override: Number.NaN }, 'price_override is NaN, which JSON would send as null'],
    [{ ...valid, active: 1 }, 'active must be a boolean, got a number'],
  ])('rejects %j', (item, message) => {
    expect(stockProblem(item)).toBe(message);
  });
});

function cyclic() {
  const attributes: Record<string, unknown> = { colour: 'red' };
  attributes.self = { back: attributes };
  return untyped({ external_id: 'SKU-1', attributes });
}

function deep(leaf: unknown, levels: number): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i += 1) value = { inner: [value] };
  return value;
}

/** Sends one batch of three items, the middle one being `bad`; returns what was sent and answered. */
async function upsertAround(bad: unknown) {
  const service = createFakeService();
  const result = await new CatalogResource(service.requester).upsertProducts([product(0), untyped(bad), product(2)]);
  return { service, result, sentJson: JSON.stringify(service.requests.map((request) => request.items)) };
}

describe('items JSON cannot carry are rejected one by one', () => {
  it.each([
    ['a cycle in an unknown field', cyclic(), 'attributes.self.back refers back to itself (a cycle), which JSON cannot carry'],
    ['a BigInt in an unknown field', untyped({ external_id: 'SKU-1', attributes: { weight: 10n } }), 'attributes.weight is a bigint, which JSON cannot carry'],
    ['a NaN 100 levels deep', untyped({ external_id: 'SKU-1', extra: deep(Number.NaN, 100) }), /^extra(\.inner\[0\]){100} is NaN, which JSON would send as null$/],
    ['an Infinity in an array', untyped({ external_id: 'SKU-1', attributes: { weight: [1, -Infinity] } }), 'attributes.weight[1] is -Infinity, which JSON would send as null'],
    ['an invalid Date', untyped({ external_id: 'SKU-1', launched: new Date(Number.NaN) }), 'launched is an invalid Date, which JSON would send as null'],
    ['a function in an array', untyped({ external_id: 'SKU-1', tags: ['a', () => 1] }), 'tags[1] is a function, which JSON would send as null'],
  ])('%s: that item is a VALIDATION_ERROR, the others are sent', async (_, bad, message) => {
    const { service, result } = await upsertAround(bad);
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]!.items.map((item) => item.external_id)).toEqual(['SKU-0', 'SKU-2']);
    expect(result.summary).toEqual({ created: 2, updated: 0, errors: 1 });
    expect(result.results[1]).toMatchObject({ index: 1, external_id: 'SKU-1', status: 'error', error: { code: 'VALIDATION_ERROR' } });
    expect(result.results[1]!.error!.message).toMatch(message);
  });

  it.each([
    ['a getter that throws', () => ({ external_id: 'SKU-1', get price(): number { throw new Error('secret 11912345678'); } })],
    ['a getter that throws, after a BigInt', () => ({ external_id: 'SKU-1', weight: 1n, get price(): number { throw new Error('boom'); } })],
    ['a Proxy whose ownKeys trap throws', () => new Proxy({ external_id: 'SKU-1' }, { ownKeys: () => { throw new Error('boom'); } })],
    ['a revoked Proxy', () => { const { proxy, revoke } = Proxy.revocable({ external_id: 'SKU-1' }, {}); revoke(); return proxy; }],
    ['an external_id getter that throws', () => ({ get external_id(): string { throw new Error('boom'); } })],
  ])('%s: that item is a VALIDATION_ERROR (without the thrown message), the others are sent', async (_, make) => {
    const { service, result } = await upsertAround(make());
    expect(service.requests[0]!.items.map((item) => item.external_id)).toEqual(['SKU-0', 'SKU-2']);
    expect(result.results[1]).toMatchObject({ index: 1, status: 'error', error: { code: 'VALIDATION_ERROR' } });
    expect(result.results[1]!.error!.message).toMatch(/could not be read/);
    expect(result.results[1]!.error!.message).not.toMatch(/secret|boom/);
  });

  it.each([
    ['a boxed BigInt', Object(1n), 'extra is a bigint, which JSON cannot carry'],
    ['a boxed NaN', new Number(Number.NaN), 'extra is NaN, which JSON would send as null'],
  ])('%s is judged as its primitive: a VALIDATION_ERROR', async (_, boxed, message) => {
    const { result } = await upsertAround({ external_id: 'SKU-1', extra: boxed });
    expect(result.results[1]).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR', message } });
  });

  it('boxed primitives are sent as JSON writes them, not as {}', async () => {
    const { sentJson, result } = await upsertAround({ external_id: 'SKU-1', extra: { n: new Number(5), s: new String('x'), b: new Boolean(false) } });
    expect(result.results[1]!.status).not.toBe('error');
    expect(sentJson).toContain('"extra":{"n":5,"s":"x","b":false}');
  });

  it('a known field keeps its own message when the item also holds a BigInt', async () => {
    const { result } = await upsertAround({ external_id: 'SKU-1', price: -1, weight: 1n });
    expect(result.results[1]!.error!.message).toBe('price is -1; it must be 0 or more');
  });

  it('stock items follow the same rule', async () => {
    const service = createFakeService({ catalog: ['SKU-0', 'SKU-1'] });
    const result = await new StockResource(service.requester).set([
      { external_id: 'SKU-0', store_id: STORE_A, stock_quantity: 1 },
      untyped({ external_id: 'SKU-1', store_id: STORE_A, stock_quantity: 2, note: { n: Number.NaN } }) as unknown as StockItem,
    ]);
    expect(service.requests[0]!.items).toHaveLength(1);
    expect(result.results[1]).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR', message: 'note.n is NaN, which JSON would send as null' } });
  });
});

describe('what is sent is what was checked', () => {
  it('an own toJSON cannot replace the checked item', async () => {
    const sneaky = { external_id: 'SKU-1', price: 5, toJSON: () => ({ external_id: 'SKU-1', price: -100 }) };
    const { sentJson } = await upsertAround(sneaky);
    expect(sentJson).toContain('{"external_id":"SKU-1","price":5}');
    expect(sentJson).not.toContain('-100');
  });

  it('an inherited toJSON deep inside cannot either', async () => {
    class Block {
      store_id = STORE_A;
      stock_quantity = 3;
      toJSON() {
        return { store_id: STORE_A, stock_quantity: 0.1 + 0.2 };
      }
    }
    const { sentJson, result } = await upsertAround({ external_id: 'SKU-1', stores: [new Block()] });
    expect(result.results[1]!.status).not.toBe('error');
    expect(sentJson).toContain(`"stores":[{"store_id":"${STORE_A}","stock_quantity":3}]`);
  });

  it('a getter is read once: the value checked is the value sent', async () => {
    let reads = 0;
    const item = {
      external_id: 'SKU-1',
      get price() {
        reads += 1;
        return reads === 1 ? 5 : -5;
      },
    };
    const { sentJson } = await upsertAround(item);
    expect(sentJson).toContain('{"external_id":"SKU-1","price":5}');
  });

  it('a Date is sent as JSON would write it', async () => {
    const { sentJson } = await upsertAround({ external_id: 'SKU-1', launched: new Date(Date.UTC(2026, 0, 2)) });
    expect(sentJson).toContain('"launched":"2026-01-02T00:00:00.000Z"');
  });
});
