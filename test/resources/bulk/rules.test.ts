import { describe, expect, it } from 'vitest';
import { decimalPlaces } from '../../../src/resources/bulk/field-checks.ts';
import { productProblem } from '../../../src/resources/bulk/product-rules.ts';
import { stockProblem } from '../../../src/resources/bulk/stock-rules.ts';
import { STORE_A } from './fake-service.ts';

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
