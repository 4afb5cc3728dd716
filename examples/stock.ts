// Sets absolute stock and per-store prices for a few products, removes one per-store price, and
// shows what the service (and the SDK, before sending) rejected.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... [INTEGRATION_STORE_ID=...] node examples/stock.ts
//
// INTEGRATION_STORE_ID may be left out with a key limited to stores (the first is used); a key that
// may write every store, like the sandbox's printed one, needs it (the sandbox lists its stores).
import { BulkOperationError, IntegrationClient } from 'integration-sdk';

const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });
const health = await client.health();
const storeId = process.env.INTEGRATION_STORE_ID ?? health.store_ids[0];
if (!storeId) {
  // A key limited to stores names them; one that may write every store (the sandbox's full key) does not, and no route lists them.
  console.error(
    'stock.ts sets the stock of one store, and this key may write every store of the merchant: set INTEGRATION_STORE_ID to one of them ' +
      '(the sandbox lists its stores under "Stores:"), e.g. INTEGRATION_STORE_ID=<store id> node examples/stock.ts',
  );
  process.exit(2);
}

// The products must exist (examples/catalog.ts creates them); an unknown one is PRODUCT_NOT_FOUND.
await client.catalog.upsertProducts([{ external_id: 'DEMO-00001', name: 'Demo product 1', price: 9.91 }]);

try {
  const result = await client.stock.set(
    [
      { external_id: 'DEMO-00001', store_id: storeId, stock_quantity: 12.345, price_override: 8.5, active: true },
      { external_id: 'DEMO-00001', store_id: storeId, stock_quantity: 11 }, // same pair again: rejected, not sent
      { external_id: 'DEMO-00002', store_id: storeId, price_override: null }, // null removes the per-store price
      { external_id: 'DEMO-00003', store_id: storeId, stock_quantity: 0.1 + 0.2 }, // 17 decimals: rejected, never rounded
      { external_id: 'NOT-IN-CATALOG', store_id: storeId, stock_quantity: 1 },
    ],
    { onProgress: (p) => console.log(`${p.itemsDone}/${p.itemsTotal} items`) },
  );
  console.log(`${result.summary.updated} updated, ${result.summary.errors} errors (sync ${result.sync_ids.join(', ')})`);
  for (const item of result.results) {
    console.log(`  #${item.index} ${item.external_id}: ${item.status}${item.error ? ` ${item.error.code} ${item.error.message}` : ''}`);
  }
} catch (error) {
  if (!(error instanceof BulkOperationError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
