import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncStateConformance } from 'integration-sdk/sync';
import { postgresSyncState } from 'integration-sdk/sync/postgres';
import { usePostgres } from '../../inbox/support/postgres.ts';

const postgres = usePostgres();

let n = 0;
syncStateConformance('postgresSyncState', () => postgresSyncState({ connectionString: postgres.current.url, schema: `sync_conf_${process.pid}_${++n}` }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
