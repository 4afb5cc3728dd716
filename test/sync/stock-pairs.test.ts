// One stock pair, one truth (issue 26 item 2): a catalog item's stores[] block and a stock item
// write the same (external_id, store_id) stock, so a write by one kind invalidates the other kind's
// fingerprint for that pair. Against the sandbox over its socket, on SQLite and Postgres.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from 'integration-sdk/sandbox';
import { createSync } from 'integration-sdk/sync';
import { clientFor, onCleanup, startSandbox } from '../e2e/helpers.ts';
import { openState, useBothStates, type StateEnv } from './support/states.ts';

const states = useBothStates('stock-pairs');

function syncOn(sandbox: Sandbox, env: StateEnv) {
  const { client, exchanges } = clientFor(sandbox);
  const sync = createSync({ client, state: openState(env) });
  onCleanup(() => sync.close());
  return { sync, exchanges };
}

describe.each(states)('one stock pair, one truth, on $name', (store) => {
  it('stock 5, then a catalog store block with 10, then stock 5 again: 5 is sent', async () => {
    const sandbox = await startSandbox();
    const [s1, s2] = sandbox.storeIds;
    const { sync, exchanges } = syncOn(sandbox, store.fresh());
    const stock = (quantity: number) => [
      { external_id: 'PAIR-1', store_id: s1!, stock_quantity: quantity },
      { external_id: 'PAIR-1', store_id: s2!, stock_quantity: 3 },
    ];
    await sync.catalog([{ external_id: 'PAIR-1', name: 'Beans', price: 9 }]);
    expect(await sync.stock(stock(5))).toMatchObject({ sent: 2, updated: 2 });
    // The catalog writes s1 only; s2 keeps what the stock sync sent.
    expect(await sync.catalog([{ external_id: 'PAIR-1', name: 'Beans', price: 9, stores: [{ store_id: s1!, stock_quantity: 10 }] }])).toMatchObject({ sent: 1, updated: 1 });
    expect(sandbox.getProduct('PAIR-1')?.stores[s1!]?.stock_quantity).toBe(10);
    exchanges.length = 0;
    expect(await sync.stock(stock(5))).toMatchObject({ unchanged: 1, sent: 1, updated: 1 });
    expect(exchanges.filter((e) => e.method === 'PATCH').map((e) => e.body)).toEqual([{ items: [{ external_id: 'PAIR-1', store_id: s1, stock_quantity: 5 }] }]);
    expect(sandbox.getProduct('PAIR-1')?.stores[s1!]?.stock_quantity).toBe(5);
    expect(await sync.stock(stock(5))).toMatchObject({ unchanged: 2, sent: 0 });
  });

  it('a catalog store block, then stock for that store, then the same catalog again: the product is sent', async () => {
    const sandbox = await startSandbox();
    const [s1, s2] = sandbox.storeIds;
    const { sync } = syncOn(sandbox, store.fresh());
    const catalog = [
      { external_id: 'PAIR-2', name: 'Tea', price: 4, stores: [{ store_id: s1!, stock_quantity: 10 }] },
      { external_id: 'PAIR-3', name: 'Cocoa', price: 6, stores: [{ store_id: s2!, stock_quantity: 1 }] },
    ];
    expect(await sync.catalog(catalog)).toMatchObject({ created: 2 });
    // Stock writes (PAIR-2, s1), a pair of PAIR-2's block, and (PAIR-3, s1), a store PAIR-3 was not sent with.
    expect(await sync.stock([{ external_id: 'PAIR-2', store_id: s1!, stock_quantity: 4 }, { external_id: 'PAIR-3', store_id: s1!, stock_quantity: 2 }])).toMatchObject({ updated: 2 });
    const again = await sync.catalog(catalog);
    expect(again).toMatchObject({ unchanged: 1, sent: 1, updated: 1 });
    expect(sandbox.getProduct('PAIR-2')?.stores[s1!]?.stock_quantity).toBe(10);
  });

  // Review 3, finding 3: a block and a stock item compare on the fields both send, not as wholes.
  it('a store block and a stock item that agree on the fields both send do not resend each other', async () => {
    const sandbox = await startSandbox();
    const [s1] = sandbox.storeIds;
    const { sync, exchanges } = syncOn(sandbox, store.fresh());
    // The nightly catalog carries stock and activation per store; the stock feed carries the stock only.
    const catalog = [{ external_id: 'PAIR-4', name: 'Salt', price: 1, stores: [{ store_id: s1!, stock_quantity: 7, active: true }] }];
    const stock = [{ external_id: 'PAIR-4', store_id: s1!, stock_quantity: 7 }];
    expect(await sync.catalog(catalog)).toMatchObject({ sent: 1, created: 1 });
    expect(await sync.stock(stock)).toMatchObject({ sent: 1, updated: 1 });
    exchanges.length = 0;
    for (let round = 0; round < 3; round++) {
      expect(await sync.catalog(catalog)).toMatchObject({ unchanged: 1, sent: 0 });
      expect(await sync.stock(stock)).toMatchObject({ unchanged: 1, sent: 0 });
    }
    expect(exchanges.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('a write that changes a field both send invalidates the other kind; one the other does not send does not', async () => {
    const sandbox = await startSandbox();
    const [s1] = sandbox.storeIds;
    const { sync } = syncOn(sandbox, store.fresh());
    const catalog = (block: Record<string, unknown>) => [{ external_id: 'PAIR-5', name: 'Pepper', price: 2, stores: [{ store_id: s1!, ...block }] }];
    const stock = (fields: Record<string, unknown>) => [{ external_id: 'PAIR-5', store_id: s1!, ...fields }];
    await sync.catalog(catalog({ stock_quantity: 7, active: true }));
    await sync.stock(stock({ stock_quantity: 7 }));

    // The catalog switches the store off: the stock item does not send `active`, what it wrote still holds.
    expect(await sync.catalog(catalog({ stock_quantity: 7, active: false }))).toMatchObject({ sent: 1, updated: 1 });
    expect(await sync.stock(stock({ stock_quantity: 7 }))).toMatchObject({ unchanged: 1, sent: 0 });
    // The stock feed adds a store price the block does not give: the product's block still holds.
    expect(await sync.stock(stock({ stock_quantity: 7, price_override: 1.5 }))).toMatchObject({ sent: 1, updated: 1 });
    expect(await sync.catalog(catalog({ stock_quantity: 7, active: false }))).toMatchObject({ unchanged: 1, sent: 0 });
    expect(sandbox.getProduct('PAIR-5')?.stores[s1!]).toMatchObject({ stock_quantity: 7, price_override: 1.5, active: false });

    // The catalog writes another quantity: the stock item's 7 no longer holds and is sent again.
    expect(await sync.catalog(catalog({ stock_quantity: 9, active: false }))).toMatchObject({ sent: 1, updated: 1 });
    expect(sandbox.getProduct('PAIR-5')?.stores[s1!]?.stock_quantity).toBe(9);
    expect(await sync.stock(stock({ stock_quantity: 7, price_override: 1.5 }))).toMatchObject({ unchanged: 0, sent: 1, updated: 1 });
    expect(sandbox.getProduct('PAIR-5')?.stores[s1!]?.stock_quantity).toBe(7);
    // And the block's 9 no longer holds either: whichever kind wrote last, the other sends again.
    expect(await sync.catalog(catalog({ stock_quantity: 9, active: false }))).toMatchObject({ unchanged: 0, sent: 1 });
  });
});
