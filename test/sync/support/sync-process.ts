// A catalog sync in its own process, for the crash test: the parent SIGKILLs it mid-run. Each
// answered batch is reported on stdout once its state write is done (`acked <count>`).
import { IntegrationClient } from '../../../src/index.ts';
import { createSync } from '../../../src/sync/index.ts';
import { sqliteSyncState } from '../../../src/sync/sqlite/index.ts';

const { SYNC_URL, SYNC_KEY, SYNC_STATE, SYNC_ITEMS } = process.env;
// Each write waits a little, so that the parent's kill lands in the middle of the run.
const slowFetch: typeof fetch = async (input, init) => {
  if (init?.method !== 'GET') await new Promise((resolve) => setTimeout(resolve, 40));
  return fetch(input, init);
};
const client = new IntegrationClient({ apiKey: SYNC_KEY!, baseUrl: SYNC_URL!, rateLimit: false, fetch: slowFetch });
const sync = createSync({ client, state: sqliteSyncState({ path: SYNC_STATE! }) });
const count = Number(SYNC_ITEMS);
const items = Array.from({ length: count }, (_, i) => ({ external_id: `CRASH-${i}`, name: `Product ${i}`, price: 1 }));
await sync.catalog(items, {
  batchSize: 50,
  onProgress: (progress) => process.stdout.write(`acked ${(progress.created ?? 0) + progress.updated}\n`),
});
process.stdout.write('done\n');
