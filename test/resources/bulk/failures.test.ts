import { describe, expect, it } from 'vitest';
import { BulkOperationError, ServiceUnavailableError } from '../../../src/errors/index.ts';
import { CatalogResource, type BulkUpsertResult } from '../../../src/resources/catalog.ts';
import { createFakeService, flush, product, products, untyped } from './fake-service.ts';

const unavailable = () =>
  new ServiceUnavailableError({ status: 503, code: 'AUTH_UNAVAILABLE', message: 'try again later', requestMethod: 'POST', requestPath: '/integration/v1/products/bulk' });

type Failure = BulkOperationError<BulkUpsertResult>;
const indexes = (results: { index: number }[]) => results.map((r) => r.index);

describe('a batch that fails as a whole', () => {
  it('throws BulkOperationError with the other batches in partial and the batch error as cause', async () => {
    const cause = unavailable();
    const service = createFakeService({ failRequest: (n) => (n === 1 ? cause : undefined) });
    // Item 1 is rejected locally in a batch that succeeds; item 3 in the batch that fails.
    const items = [product(0), untyped({ external_id: '' }), product(2), product(3, { price: -1 }), product(4), product(5), product(6)];
    const error = (await new CatalogResource(service.requester).upsertProducts(items, { batchSize: 2 }).catch((e: unknown) => e)) as Failure;

    expect(error).toBeInstanceOf(BulkOperationError);
    expect(error.cause).toBe(cause);
    expect(service.requests).toHaveLength(2); // nothing is started after the failure
    expect(indexes(error.partial.results)).toEqual([0, 1, 2]);
    expect(error.partial.sync_ids).toEqual(['sync-0']);
    expect(error.partial.summary).toEqual({ created: 2, updated: 0, errors: 1 });
    expect(error.message).toContain('the batch of items 3–5 failed after its retries (ServiceUnavailableError: 503 AUTH_UNAVAILABLE');
    expect(error.message).toContain('2 items were written');
  });

  it('with concurrency, lets the batches in flight settle, starts no new one, then throws', async () => {
    const cause = unavailable();
    const service = createFakeService({ manual: true, failRequest: (n) => (n === 1 ? cause : undefined) });
    let settled = false;
    const pending = new CatalogResource(service.requester)
      .upsertProducts(products(12), { batchSize: 2, concurrency: 3 })
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    await flush();
    expect(service.requests).toHaveLength(3);
    service.release(1);
    await flush();
    expect(service.requests).toHaveLength(3);
    expect(settled).toBe(false);
    service.release(2);
    await flush();
    expect(settled).toBe(false);
    service.release(0);
    const error = (await pending) as Failure;
    expect(error).toBeInstanceOf(BulkOperationError);
    expect(error.cause).toBe(cause);
    expect(indexes(error.partial.results)).toEqual([0, 1, 4, 5]);
    expect(error.partial.sync_ids).toEqual(['sync-0', 'sync-2']);
    expect(error.message).toContain('items 2–3');
    expect(service.requests).toHaveLength(3);
  });

  it('names every batch that failed, and takes the first in input order as cause', async () => {
    const first = unavailable();
    const service = createFakeService({ failRequest: (n) => (n === 0 ? first : n === 2 ? unavailable() : undefined) });
    const error = (await new CatalogResource(service.requester)
      .upsertProducts(products(6), { batchSize: 2, concurrency: 3 })
      .catch((e: unknown) => e)) as Failure;
    expect(error.cause).toBe(first);
    expect(indexes(error.partial.results)).toEqual([2, 3]);
    expect(error.message).toContain('the batch of items 0–1 failed');
    expect(error.message).toContain('The batches of items 4–5 failed too.');
  });

  it('upsertBatches yields the windows before the failure, then throws with only the later ones in partial', async () => {
    const cause = unavailable();
    const service = createFakeService({ manual: true, failRequest: (n) => (n === 2 ? cause : undefined) });
    const yielded: (string | null)[] = [];
    const done = (async () => {
      for await (const batch of new CatalogResource(service.requester).upsertBatches(products(10), { batchSize: 2, concurrency: 2 })) {
        yielded.push(batch.sync_id);
      }
    })().catch((e: unknown) => e);
    await flush();
    service.release(0);
    service.release(1);
    await flush();
    expect(service.requests).toHaveLength(4);
    service.release(2);
    service.release(3);
    const error = (await done) as Failure;
    expect(yielded).toEqual(['sync-0', 'sync-1']);
    expect(error).toBeInstanceOf(BulkOperationError);
    expect(error.cause).toBe(cause);
    expect(error.partial.sync_ids).toEqual(['sync-3']);
    expect(indexes(error.partial.results)).toEqual([6, 7]);
    expect(error.message).toContain('not yielded yet');
  });

  it('a failing input stops the run like a failed batch: what was written is in partial', async () => {
    const broken = new Error('ERP cursor closed');
    async function* items() {
      for (let i = 0; i < 5; i += 1) yield product(i);
      throw broken;
    }
    const service = createFakeService();
    const error = (await new CatalogResource(service.requester).upsertProducts(items(), { batchSize: 2 }).catch((e: unknown) => e)) as Failure;
    expect(error).toBeInstanceOf(BulkOperationError);
    expect(error.cause).toBe(broken);
    expect(service.requests).toHaveLength(2);
    expect(indexes(error.partial.results)).toEqual([0, 1, 2, 3]);
    expect(error.message).toContain('reading the input failed; nothing from item 4 on was sent (Error: ERP cursor closed)');
  });
});
