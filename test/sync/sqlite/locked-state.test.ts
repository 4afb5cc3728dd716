// A SQLite state locked by another process (issue 26 item 6): a run rejects, once the busy timeout
// has passed, with one sentence naming the state and what to do, never a bare "database is locked";
// reading a state whose tables are current needs no write lock (review 3, finding 10).
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

/** Another process holding the file's write lock until the test ends. */
async function holdWriteLock(path: string): Promise<void> {
  const locker = spawn(process.execPath, ['--no-warnings', lockProcess], { env: { ...process.env, SYNC_STATE: path }, stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => void locker.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    locker.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
    locker.on('exit', () => reject(new Error('the locking process exited')));
  });
}

it('a state locked by another process rejects with a sentence naming it and what to do', async () => {
  const sandbox = await startSandbox();
  const path = `${dir.path}/locked.db`;
  const { client } = clientFor(sandbox);
  const sync = createSync({ client, state: sqliteSyncState({ path, busyTimeoutMs: 200 }) });
  onCleanup(() => sync.close());
  // The state exists (WAL and tables) before the other process takes its lock.
  await sync.catalog([{ external_id: 'L-1', name: 'Locked', price: 1 }]);

  await holdWriteLock(path);

  const error = await sync.catalog([{ external_id: 'L-1', name: 'Locked', price: 2 }]).then(() => undefined, (rejected: unknown) => rejected);
  expect(error).toBeInstanceOf(SyncStateError);
  const { message } = error as SyncStateError;
  expect(message).toBe(
    `The sync state (SQLite file ${path}) is locked by another process, which held its write lock for more than 200 ms: let that process finish or stop it (a tool with an open transaction on the file), then run again.`,
  );
  expect((error as SyncStateError).cause).toMatchObject({ message: expect.stringMatching(/database is locked/) });
});

it('a state with current tables is read, by a new process\'s state, while another process holds the write lock', async () => {
  const sandbox = await startSandbox();
  const path = `${dir.path}/read-while-locked.db`;
  const { client } = clientFor(sandbox);
  const writer = createSync({ client, state: sqliteSyncState({ path }) });
  const run = await writer.catalog([{ external_id: 'R-1', name: 'Read', price: 1 }]);
  await writer.close();
  await holdWriteLock(path);

  // Opened anew, as `sync runs` in its own process does: its first use checks the tables and finds
  // them current, with no write; a busy timeout of 0 fails at once on any write lock it would need.
  const state = sqliteSyncState({ path, busyTimeoutMs: 0 });
  onCleanup(() => state.close());
  expect((await state.runs(10)).map((past) => [past.runId, past.outcome])).toEqual([[run.runId, 'completed']]);
  const sync = createSync({ client, state: sqliteSyncState({ path, busyTimeoutMs: 0 }) });
  onCleanup(() => sync.close());
  const listed = [];
  for await (const past of sync.runs()) listed.push(past.runId);
  expect(listed).toEqual([run.runId]);
});
