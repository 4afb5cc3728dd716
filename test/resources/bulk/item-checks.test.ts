// What JSON cannot carry faithfully is one item's VALIDATION_ERROR, never its batch's failure nor a
// silent change; and what is sent is exactly what was checked (issue 14, item 9).
import { describe, expect, it } from 'vitest';
import { CatalogResource } from '../../../src/resources/catalog.ts';
import { StockResource } from '../../../src/resources/stock.ts';
import type { StockItem } from '../../../src/schemas/stock.ts';
import { createFakeService, product, STORE_A, untyped } from './fake-service.ts';

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
