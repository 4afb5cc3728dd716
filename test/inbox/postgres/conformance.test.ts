import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inboxStoreConformance } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();

let n = 0;
// A schema per test: each starts empty, and the schema option is exercised.
inboxStoreConformance('postgresStore', () => postgresStore({ connectionString: postgres.current.url, schema: `conformance_${process.pid}_${++n}` }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
