// A nightly catalog job with the delta sync: the export is read as a stream, only what changed
// since the service last acknowledged it is sent, and products that left the export are listed
// (and, with --deactivate-missing, turned off in their stores). Run it twice: the second run sends
// nothing but one health() call.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... [INTEGRATION_STORE_ID=...] node examples/sync.ts [--state ./integration-state.db] [--edit N] [--drop N] [--deactivate-missing]
import { parseArgs } from 'node:util';
import { IntegrationClient, type ProductItem } from 'integration-sdk';
import { createSync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';

const { values } = parseArgs({
  options: {
    state: { type: 'string', default: './integration-state.db' },
    edit: { type: 'string', default: '0' }, // how many products get a new price this run
    drop: { type: 'string', default: '0' }, // how many products leave the export this run
    'deactivate-missing': { type: 'boolean', default: false },
  },
});
const edit = Number(values.edit);
const drop = Number(values.drop);

const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });
const storeId = process.env.INTEGRATION_STORE_ID ?? (await client.health()).store_ids[0];
const sync = createSync({ client, state: sqliteSyncState({ path: values.state }), maxAgeDays: 7 });

/** Stands in for the ERP's export: 2,000 products, read one by one. */
async function* exportFromErp(): AsyncIterable<ProductItem> {
  for (let i = 1 + drop; i <= 2_000; i += 1) {
    yield {
      external_id: `SYNC-DEMO-${String(i).padStart(5, '0')}`,
      name: `Demo product ${i}`,
      price: i <= drop + edit ? 20 + i / 100 : 10 + i / 100,
      stores: storeId ? [{ store_id: storeId, stock_quantity: (i % 40) + 0.5 }] : [],
    };
  }
}

try {
  const run = await sync.catalog(exportFromErp());
  console.log(`run ${run.runId}: ${run.total} items, ${run.unchanged} unchanged, ${run.sent} sent (${run.created} created, ${run.updated} updated), ${run.errors} errors, ${run.orphans ?? '?'} missing, in ${run.durationMs} ms`);
  for (const failed of run.results.slice(0, 10)) console.log(`  #${failed.index} ${failed.external_id}: ${failed.error?.code} ${failed.error?.message}`);
  if (values['deactivate-missing'] && run.orphans) {
    const { deactivated, skipped, errors } = await sync.deactivate('catalog', sync.orphans('catalog'));
    console.log(`deactivated ${deactivated} missing products (${errors} errors, ${skipped} sent without stores)`);
  }
} finally {
  await sync.close();
}
