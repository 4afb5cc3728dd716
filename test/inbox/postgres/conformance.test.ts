import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inboxStoreConformance } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.ts';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.dispose();
});

let n = 0;
// A schema per test: each starts empty, and the schema option is exercised.
inboxStoreConformance('postgresStore', () => postgresStore({ connectionString: postgres.url, schema: `conformance_${process.pid}_${++n}` }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
