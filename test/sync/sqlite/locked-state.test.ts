// A SQLite state locked by another process (issue 26 item 6): a run rejects, once the busy timeout
// has passed, with one sentence naming the state and what to do, never a bare "database is locked".
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { createSync, SyncStateError } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { clientFor, onCleanup, startSandbox } from '../../e2e/helpers.ts';
import { tempDir } from '../../inbox/support/temp-dir.ts';

const dir = tempDir('sync-locked');
afterAll(() => dir.remove());
const lockProcess = fileURLToPath(new URL('../support/lock-process.ts', import.meta.url));

it('a state locked by another process rejects with a sentence naming it and what to do', async () => {
  const sandbox = await startSandbox();
  const path = `${dir.path}/locked.db`;
  const { client } = clientFor(sandbox);
  const sync = createSync({ client, state: sqliteSyncState({ path, busyTimeoutMs: 200 }) });
  onCleanup(() => sync.close());
  // The state exists (WAL and tables) before the other process takes its lock.
  await sync.catalog([{ external_id: 'L-1', name: 'Locked', price: 1 }]);

  const locker = spawn(process.execPath, ['--no-warnings', lockProcess], { env: { ...process.env, SYNC_STATE: path }, stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => void locker.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    locker.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
    locker.on('exit', () => reject(new Error('the locking process exited')));
  });

  const error = await sync.catalog([{ external_id: 'L-1', name: 'Locked', price: 2 }]).then(() => undefined, (rejected: unknown) => rejected);
  expect(error).toBeInstanceOf(SyncStateError);
  const { message } = error as SyncStateError;
  expect(message).toBe(
    `The sync state (SQLite file ${path}) is locked by another process, which held its write lock for more than 200 ms: let that process finish or stop it (a tool with an open transaction on the file), then run again.`,
  );
  expect((error as SyncStateError).cause).toMatchObject({ message: expect.stringMatching(/database is locked/) });
});
