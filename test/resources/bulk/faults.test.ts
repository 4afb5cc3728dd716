/**
 * A 10,000-item bulk upsert through a faulty sandbox (issue 4 part 7, item 3): 500/503/429 before
 * processing, processed-then-500, and lost responses. The catalog must end exactly equal to the
 * input, with exactly one result per input item.
 */
import { expect, test } from 'vitest';
import type { ProductItem } from 'integration-sdk';
import type { FaultKind, ProductSnapshot } from 'integration-sdk/sandbox';
import { clientFor, ScaledClock, startSandbox, type Exchange } from '../../e2e/helpers.ts';

const TOTAL = 10_000;
const STORES = ['7c9e6679-7425-40de-944b-e07fc1f90ae7', 'b3e1d2c4-5f60-4a7b-8c9d-0e1f2a3b4c5d', 'e8f9a0b1-c2d3-4e5f-a6b7-c8d9e0f1a2b3'];

function itemAt(i: number): ProductItem {
  const id = `BULK-${String(i).padStart(5, '0')}`;
  return {
    external_id: id,
    name: `Produto ${i}`,
    price: ((i * 37) % 10_000) / 100,
    // A third with a real GTIN, a third with a short one (stored as null), a third without.
    gtin: i % 3 === 0 ? `789${String(i).padStart(10, '0')}` : i % 3 === 1 ? String(i % 100_000).slice(0, 5) : null,
    category: i % 2 === 0 ? 'Mercearia' : 'Padaria',
    stores: STORES.slice(0, i % 4).map((store_id, s) => ({
      store_id,
      stock_quantity: ((i + s) % 1_000) / 8, // up to 3 decimals, exact in binary and in JSON
      price_override: ((i * 13 + s) % 5_000) / 100,
      active: (i + s) % 5 !== 0,
    })),
  };
}

function expectedSnapshot(item: ProductItem): ProductSnapshot {
  return {
    external_id: item.external_id,
    name: item.name as string,
    price: item.price as number,
    gtin: typeof item.gtin === 'string' && item.gtin.length > 5 ? item.gtin : null,
    category: item.category ?? null,
    stores: Object.fromEntries((item.stores ?? []).map((b) => [b.store_id, { stock_quantity: b.stock_quantity ?? null, price_override: b.price_override ?? null, active: b.active ?? true }])),
  };
}

/** What the sandbox did with an attempt, from what came back (docs/sandbox.md, "Faults"). */
function faultOf(exchange: Exchange): FaultKind | 'ok' {
  if (exchange.status === 'dropped') return 'drop';
  if (exchange.status === 200) return 'ok';
  if (exchange.status === 429) return 'error429';
  if (exchange.status === 503) return 'error503';
  // Both are 500 INTERNAL; only the sandbox's message tells whether the request was processed.
  if (exchange.status === 500) return /not processed/i.test(exchange.message ?? '') ? 'error500' : 'processed500';
  throw new Error(`unexpected answer ${exchange.status} ${exchange.code}`);
}

test('10,000 products under every fault kind: the catalog equals the input, one result per item', async () => {
  const sandbox = await startSandbox({ faults: { rate: 0.3, seed: 51 } });
  // The client's time runs 20× faster (the 1 s Retry-After of a 429 fault takes 50 ms); its
  // deadlines are raised to match so that a slow batch on a busy machine is not a time-out.
  const { client, exchanges } = clientFor(sandbox, { clock: new ScaledClock(20), timeoutMs: 600_000, totalTimeoutMs: 2_000_000_000, maxRetries: 10 });
  const items = Array.from({ length: TOTAL }, (_, i) => itemAt(i));
  const progress: number[] = [];

  const result = await client.catalog.upsertProducts(items, { onProgress: (p) => progress.push(p.itemsDone) });

  // Every input item has exactly one result, at its global index, in input order.
  expect(result.results).toHaveLength(TOTAL);
  result.results.forEach((r, i) => {
    expect(r.index).toBe(i);
    expect(r.external_id).toBe(items[i]?.external_id);
    expect(r.error).toBeUndefined();
  });
  expect(progress).toEqual(Array.from({ length: 20 }, (_, b) => (b + 1) * 500));

  // Every attempt, grouped by the batch it carried (its first external_id).
  const byBatch = new Map<string, Array<FaultKind | 'ok'>>();
  for (const exchange of exchanges) {
    expect(exchange.path).toBe('/integration/v1/products/bulk');
    const first = (exchange.body as { items: ProductItem[] }).items[0]?.external_id as string;
    byBatch.set(first, [...(byBatch.get(first) ?? []), faultOf(exchange)]);
  }
  expect([...byBatch.keys()]).toEqual(Array.from({ length: 20 }, (_, b) => items[b * 500]?.external_id));
  const kinds = [...byBatch.values()].flat();
  // Seed 51 gives two faults of each kind (10 of 30 attempts); each batch ends with exactly one success.
  expect(kinds.filter((k) => k !== 'ok').sort()).toEqual(['drop', 'drop', 'error429', 'error429', 'error500', 'error500', 'error503', 'error503', 'processed500', 'processed500']);
  for (const outcomes of byBatch.values()) {
    expect(outcomes.at(-1)).toBe('ok');
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
  }
  expect(result.sync_ids).toHaveLength(20);
  expect(new Set(result.sync_ids).size).toBe(20);

  // A batch processed by a lost attempt is answered `updated` on its retry; every other `created`.
  const expectedStatus = [...byBatch.values()].flatMap((outcomes) => {
    const processedBefore = outcomes.some((o) => o === 'processed500' || o === 'drop');
    return Array<string>(500).fill(processedBefore ? 'updated' : 'created');
  });
  expect(result.results.map((r) => r.status)).toEqual(expectedStatus);
  const updated = expectedStatus.filter((s) => s === 'updated').length;
  expect(updated).toBeGreaterThan(0);
  expect(result.summary).toEqual({ created: TOTAL - updated, updated, errors: 0 });

  // The sandbox's catalog holds exactly the input.
  sandbox.setFaults(null);
  const mismatches = items.filter((item) => JSON.stringify(sandbox.getProduct(item.external_id)) !== JSON.stringify(expectedSnapshot(item)));
  expect(mismatches.map((m) => m.external_id)).toEqual([]);
  expect(sandbox.getProduct('BULK-00007')).toEqual(expectedSnapshot(itemAt(7)));
  expect(sandbox.getProduct('BULK-10000')).toBeUndefined();
});

test('stock.set of 1,200 items, 3 batches in flight, under every fault kind: every store holds its value', async () => {
  const sandbox = await startSandbox();
  const { client, exchanges } = clientFor(sandbox, { clock: new ScaledClock(20), timeoutMs: 600_000, totalTimeoutMs: 2_000_000_000, maxRetries: 10 });
  const products = Array.from({ length: 400 }, (_, i) => ({ external_id: `STK-${i}`, name: `Stock ${i}`, price: 1 }));
  expect((await client.catalog.upsertProducts(products)).summary).toEqual({ created: 400, updated: 0, errors: 0 });

  sandbox.setFaults({ rate: 0.3, seed: 11 });
  const items = products.flatMap((p, i) =>
    STORES.map((store_id, s) => ({ external_id: p.external_id, store_id, stock_quantity: (i * 3 + s) / 1000, price_override: s === 0 ? null : (i % 50) + s / 100, active: (i + s) % 2 === 0 })),
  );
  const sent = exchanges.length;
  const result = await client.stock.set(items, { batchSize: 100, concurrency: 3 });
  sandbox.setFaults(null);
  // Faults did happen (which ones depends on the order the concurrent batches arrive in).
  const attempts = exchanges.slice(sent);
  expect(attempts.filter((e) => e.status === 200)).toHaveLength(12);
  expect(attempts.length).toBeGreaterThan(12);

  expect(result.summary).toEqual({ updated: 1_200, errors: 0 });
  expect(result.sync_ids).toHaveLength(12);
  expect(result.results.map((r) => [r.index, r.external_id, r.store_id, r.status])).toEqual(items.map((item, i) => [i, item.external_id, item.store_id, 'updated']));
  for (const [i, p] of products.entries()) {
    expect(sandbox.getProduct(p.external_id)?.stores).toEqual(
      Object.fromEntries(STORES.map((store_id, s) => [store_id, { stock_quantity: (i * 3 + s) / 1000, price_override: s === 0 ? null : (i % 50) + s / 100, active: (i + s) % 2 === 0 }])),
    );
  }
});
