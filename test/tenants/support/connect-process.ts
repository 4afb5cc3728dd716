// A connect (or, with TENANTS_OPERATION=updateKey, an updateKey: the same path with a new key) in
// its own process, for the crash tests: the parent SIGKILLs it while the proxy holds one of its
// requests (after the sandbox processed it).
import { createTenants } from '../../../src/tenants/index.ts';
import { postgresTenantStore } from '../../../src/tenants/postgres/index.ts';
import { sqliteTenantStore } from '../../../src/tenants/sqlite/index.ts';

const { TENANTS_BASE_URL, TENANTS_DB, TENANTS_PG_URL, TENANTS_PG_SCHEMA, TENANTS_ENCRYPTION_KEY, TENANTS_API_KEY, TENANTS_HOOK, TENANTS_ID, TENANTS_OPERATION } = process.env;
const tenants = createTenants({
  // The parent's store: a Postgres schema when it names one, else its SQLite file.
  store: TENANTS_PG_URL ? postgresTenantStore({ connectionString: TENANTS_PG_URL, schema: TENANTS_PG_SCHEMA! }) : sqliteTenantStore({ path: TENANTS_DB! }),
  encryptionKey: TENANTS_ENCRYPTION_KEY!,
  baseUrl: TENANTS_BASE_URL!,
  webhookUrl: (id) => `${TENANTS_HOOK}/${id}`,
});
if (TENANTS_OPERATION === 'updateKey') await tenants.updateKey(TENANTS_ID!, TENANTS_API_KEY!);
else await tenants.connect(TENANTS_ID!, { apiKey: TENANTS_API_KEY! });
process.stdout.write('done\n');
