// An updateKey in its own process, for the crash tests: the parent SIGKILLs it while the proxy holds
// one of its requests (after the sandbox processed it).
import { createTenants } from '../../../src/tenants/index.ts';
import { sqliteTenantStore } from '../../../src/tenants/sqlite/index.ts';

const { TENANTS_BASE_URL, TENANTS_DB, TENANTS_ENCRYPTION_KEY, TENANTS_API_KEY, TENANTS_HOOK, TENANTS_ID } = process.env;
const tenants = createTenants({
  store: sqliteTenantStore({ path: TENANTS_DB! }),
  encryptionKey: TENANTS_ENCRYPTION_KEY!,
  baseUrl: TENANTS_BASE_URL!,
  webhookUrl: (id) => `${TENANTS_HOOK}/${id}`,
});
await tenants.updateKey(TENANTS_ID!, TENANTS_API_KEY!);
process.stdout.write('done\n');
