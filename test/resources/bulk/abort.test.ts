import { describe, expect, it } from 'vitest';
import { CatalogResource } from '../../../src/resources/catalog.ts';
import { StockResource } from '../../../src/resources/stock.ts';
import { createFakeService, flush, product, STORE_A } from './fake-service.ts';

describe('signal', () => {
  it('aborts at once: batches in flight are not waited for and the input is closed', async () => {
    const service = createFakeService({ manual: true }); // answers never come unless released
    let inputClosed = false;
    let read = 0;
    async function* items() {
      try {
        for (let i = 0; i < 100; i += 1) {
          read += 1;
          yield product(i);
        }
      } finally {
        inputClosed = true;
      }
    }
    const controller = new AbortController();
    const pending = new CatalogResource(service.requester).upsertProducts(items(), { batchSize: 2, concurrency: 2, signal: controller.signal });
    await flush();
    expect(service.requests).toHaveLength(2);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await flush();
    expect(inputClosed).toBe(true);
    expect(read).toBeLessThan(100);
    expect(service.requests).toHaveLength(2);
  });

  it('aborts while waiting for a slow input', async () => {
    const service = createFakeService();
    const never: AsyncIterable<unknown> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) };
    const controller = new AbortController();
    const pending = new CatalogResource(service.requester).upsertProducts(never as AsyncIterable<never>, { signal: controller.signal });
    await flush();
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });

  it('sends nothing when already aborted', async () => {
    const service = createFakeService();
    const signal = AbortSignal.abort();
    await expect(new StockResource(service.requester).set([{ external_id: 'SKU-1', store_id: STORE_A, active: true }], { signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(service.requests).toHaveLength(0);
  });
});
