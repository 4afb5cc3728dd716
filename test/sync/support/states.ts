// The two shipped states for tests that must hold on both: a fresh SQLite file or a fresh Postgres
// schema per call, each described by the environment a child process needs to open it too
// (see open-state.ts).
import { afterAll } from 'vitest';
import type { SyncState } from 'integration-sdk/sync';
import { usePostgres } from '../../inbox/support/postgres.ts';
import { tempDir } from '../../inbox/support/temp-dir.ts';
import { openStateFromEnv, type StateEnv } from './open-state.ts';

export interface StateUnderTest {
  name: 'SQLite' | 'Postgres';
  /** A new, empty state's location. */
  fresh(): StateEnv;
}

export { openStateFromEnv as openState, type StateEnv };

/** Both states, for `describe.each`; starts a Postgres for the calling test file. */
export function useBothStates(label: string): StateUnderTest[] {
  const dir = tempDir(`sync-${label}`);
  afterAll(() => dir.remove());
  const postgres = usePostgres();
  let n = 0;
  return [
    { name: 'SQLite', fresh: () => ({ SYNC_STATE: `${dir.path}/state-${++n}.db` }) },
    { name: 'Postgres', fresh: () => ({ SYNC_STATE: postgres.current.url, SYNC_SCHEMA: `sync_${label.replaceAll('-', '_')}_${process.pid}_${++n}` }) },
  ];
}

export type { SyncState };
