// A catalog sync in its own process whose write reaches the service and is applied, and whose
// answer then never reaches the state: once the service has answered, the process says `applied`
// and hangs until the parent SIGKILLs it (a kill between the request and its record).
import { IntegrationClient } from '../../../src/index.ts';
import { createSync } from '../../../src/sync/index.ts';
import { openStateFromEnv } from './open-state.ts';

const { SYNC_URL, SYNC_KEY, SYNC_STATE, SYNC_SCHEMA, SYNC_ITEMS } = process.env;
const appliedThenHang: typeof fetch = async (input, init) => {
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  const response = await fetch(input, init);
  if (method === 'GET') return response;
  process.stdout.write('applied\n');
  return new Promise<never>(() => {});
};
const client = new IntegrationClient({ apiKey: SYNC_KEY!, baseUrl: SYNC_URL!, rateLimit: false, fetch: appliedThenHang });
const sync = createSync({ client, state: openStateFromEnv({ SYNC_STATE: SYNC_STATE!, SYNC_SCHEMA }) });
await sync.catalog(JSON.parse(SYNC_ITEMS!) as never[]);
process.stdout.write('done\n');
