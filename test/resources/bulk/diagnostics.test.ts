// A bulk run publishes one `integration-sdk:batch` context per batch, as a child of its call, with
// counts only: checked with a real diagnostics_channel subscriber, a real sandbox and a retried batch.
import diagnostics from 'node:diagnostics_channel';
import { afterEach, expect, test } from 'vitest';
import { CHANNEL_NAMES, traceCall, type BatchContext, type CallContext } from '../../../src/diagnostics.ts';
import { clientFor, ScaledClock, startSandbox } from '../../e2e/helpers.ts';

const unsubscribes: (() => void)[] = [];
afterEach(() => unsubscribes.splice(0).forEach((unsubscribe) => unsubscribe()));

function record<C extends object>(name: string): { started: C[]; ended: C[] } {
  const seen = { started: [] as C[], ended: [] as C[] };
  const handlers = {
    start: (context: C) => seen.started.push(context),
    asyncEnd: (context: C) => seen.ended.push(context),
    end() {},
    asyncStart() {},
    error() {},
  };
  const channel = diagnostics.tracingChannel<unknown, C>(name);
  channel.subscribe(handlers);
  unsubscribes.push(() => channel.unsubscribe(handlers));
  return seen;
}

test('each batch is published with its index, item count and result counts, the retried one once', async () => {
  const sandbox = await startSandbox();
  let bulkPosts = 0;
  const { client } = clientFor(sandbox, {
    clock: new ScaledClock(50),
    // The second batch's first attempt gets a 503 before reaching the service: it is retried.
    fetch: async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.endsWith('/products/bulk') && ++bulkPosts === 2) {
        return new Response(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'try again' } }), { status: 503, headers: { 'content-type': 'application/json' } });
      }
      return globalThis.fetch(input, init);
    },
  });
  const calls = record<CallContext>(CHANNEL_NAMES.call);
  const batches = record<BatchContext>(CHANNEL_NAMES.batch);

  const items = Array.from({ length: 5 }, (_, i) => ({ external_id: `DIAG-${i}`, name: `Product ${i}`, price: 1 }));
  items.push({ external_id: 'DIAG-0', name: 'repeat', price: 1 }); // rejected before sending
  const result = await traceCall('catalog.upsertProducts', () => client.catalog.upsertProducts(items, { batchSize: 2, concurrency: 1 }), (r) => ({ ...r.summary }));
  expect(result.summary).toEqual({ created: 5, updated: 0, errors: 1 });

  expect(calls.ended).toHaveLength(1);
  const call = calls.ended[0]!;
  expect(call.batches).toBe(3);
  expect(batches.ended.map(({ index, items: count, result: counts }) => ({ index, count, counts }))).toEqual([
    { index: 0, count: 2, counts: { created: 2, updated: 0, errors: 0 } },
    { index: 1, count: 2, counts: { created: 2, updated: 0, errors: 0 } },
    { index: 2, count: 1, counts: { created: 1, updated: 0, errors: 0 } },
  ]);
  for (const batch of batches.ended) {
    expect(batch.call).toBe(call);
    expect(batch.operation).toBe('catalog.upsertProducts');
  }
  // The retried batch (4 requests for 3 batches) is one batch context, published once.
  expect(bulkPosts).toBe(4);
  expect(batches.started.map((batch) => batch.index)).toEqual([0, 1, 2]);
  // Counts only: no external id, name or value anywhere on the batch channel.
  const published = JSON.stringify(batches.ended.map(({ call: _call, ...rest }) => rest));
  expect(published).not.toMatch(/DIAG-|Product \d/);
});
