// Opens the state a test names in its environment: SYNC_STATE is a SQLite file or a Postgres URL
// (with SYNC_SCHEMA). Shared by the tests and the child processes they kill.
import type { SyncState } from '../../../src/sync/index.ts';
import { postgresSyncState } from '../../../src/sync/postgres/index.ts';
import { sqliteSyncState } from '../../../src/sync/sqlite/index.ts';

export interface StateEnv {
  SYNC_STATE: string;
  SYNC_SCHEMA?: string;
}

export function openStateFromEnv(env: StateEnv): SyncState {
  return env.SYNC_STATE.startsWith('postgres')
    ? postgresSyncState({ connectionString: env.SYNC_STATE, schema: env.SYNC_SCHEMA })
    : sqliteSyncState({ path: env.SYNC_STATE });
}
