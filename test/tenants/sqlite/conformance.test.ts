import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tenantStoreConformance } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { tempDir } from '../../inbox/support/temp-dir.ts';

const dir = tempDir('tenants-sqlite-conformance');
afterAll(() => dir.remove());

let n = 0;
tenantStoreConformance('sqliteTenantStore', () => sqliteTenantStore({ path: `${dir.path}/tenants-${++n}.db` }), { describe, it, expect, beforeEach, afterEach });
