// Pushes a catalog in batches the way an ERP job would: products read as a stream, progress on the
// console, item errors listed, and a failed batch reported with what was already written.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... [INTEGRATION_STORE_ID=...] node examples/catalog.ts
import { BulkOperationError, IntegrationClient, type BulkUpsertResult, type ProductItem } from 'integration-sdk';

const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });
const health = await client.health();
const storeId = process.env.INTEGRATION_STORE_ID ?? health.store_ids[0];

/** Stands in for an ERP cursor: items arrive one by one, and are never all in memory. */
async function* readProductsFromErp(): AsyncIterable<ProductItem> {
  for (let i = 1; i <= 1_200; i += 1) {
    yield {
      external_id: `DEMO-${String(i).padStart(5, '0')}`,
      name: `Demo product ${i}`,
      price: 9.9 + i / 100,
      category: 'Demo',
      // Weight-based stock keeps 3 decimals; the SDK never rounds.
      stores: storeId ? [{ store_id: storeId, stock_quantity: (i % 50) + 0.125 }] : [],
    };
  }
}

function report(result: BulkUpsertResult): void {
  const { created, updated, errors } = result.summary;
  console.log(`\n${created} created, ${updated} updated, ${errors} errors in ${result.sync_ids.length} batches`);
  for (const item of result.results.filter((r) => r.status === 'error').slice(0, 10)) {
    console.log(`  #${item.index} ${item.external_id}: ${item.error?.code} ${item.error?.message}`);
  }
}

try {
  const result = await client.catalog.upsertProducts(readProductsFromErp(), {
    batchSize: 500,
    concurrency: 2,
    onProgress: (p) => process.stdout.write(`\r${p.itemsDone} items, ${p.batchesDone} batches, ${p.errors} errors`),
  });
  report(result);
} catch (error) {
  if (!(error instanceof BulkOperationError)) throw error;
  // Every batch that succeeded is in `partial`; the failed batch can be sent again safely.
  console.error(`\n${error.message}`);
  report(error.partial as BulkUpsertResult);
  process.exitCode = 1;
}

// For inputs too large to keep every result: one window at a time.
for await (const batch of client.catalog.upsertBatches(readProductsFromErp(), { batchSize: 500 })) {
  const first = batch.results[0]?.index ?? 0;
  console.log(`items ${first}–${first + batch.results.length - 1}: sync ${batch.sync_id ?? '(nothing sent)'}`, batch.summary);
}
