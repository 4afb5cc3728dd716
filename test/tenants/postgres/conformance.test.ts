import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tenantStoreConformance } from 'integration-sdk/tenants';
import { postgresTenantStore } from 'integration-sdk/tenants/postgres';
import { usePostgres } from '../../inbox/support/postgres.ts';

const postgres = usePostgres();

let n = 0;
tenantStoreConformance('postgresTenantStore', () => postgresTenantStore({ connectionString: postgres.current.url, schema: `tenants_conf_${process.pid}_${++n}` }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
