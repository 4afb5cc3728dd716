// On a Node the SQLite stores cannot run on (below 22.13), every inbox command with a SQLite store
// and doctor --store say so in one line (which parts need which Node, and that a Postgres store
// works everywhere) and exit 2, never blaming the store option. The Node is faked: the feature
// detection of node:sqlite finds nothing in the CLI process (test/support/hide-node-sqlite.mjs).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { runCli } from './helpers.ts';

const dir = tempDir('cli-old-node');
afterAll(() => dir.remove());
const hide = pathToFileURL(fileURLToPath(new URL('../support/hide-node-sqlite.mjs', import.meta.url))).href;

test('a SQLite --store on a Node without node:sqlite: one line saying what needs which Node, exit 2, for every inbox command and doctor', async () => {
  const existing = `${dir.path}/inbox.db`;
  const store = sqliteStore({ path: existing });
  await store.migrate();
  await store.close();
  const env = { NODE_OPTIONS: `--import=${hide}`, INTEGRATION_API_KEY: 'service_k1_abcdefghijklmnopqrstuvwx', INTEGRATION_BASE_URL: 'http://127.0.0.1:9/integration/v1' };
  const commands = [
    ['inbox', 'stats', '--store', existing],
    ['inbox', 'dead', '--store', `${dir.path}/missing.db`],
    ['inbox', 'retry', 'd-1', '--store', existing],
    ['inbox', 'retry-dead', '--store', existing],
    ['inbox', 'reconcile', '--store', existing],
    ['inbox', 'reconcile', '--store', existing, '--ack', 'all'],
    ['doctor', '--store', existing],
  ];
  const results = await Promise.all(commands.map((args) => runCli(args, { env })));
  for (const [index, result] of results.entries()) {
    const command = commands[index]!.join(' ');
    expect(result.code, command).toBe(2);
    expect(result.stdout, command).toBe('');
    expect(result.stderr.trim().split('\n'), command).toEqual([
      expect.stringMatching(/^The SQLite stores need Node 22\.13 or newer \(node:sqlite\) and this is Node \S+; the client, webhooks and the Postgres stores run on older Nodes too, so use a Postgres store \(a postgres:\/\/ URL, which works on every Node\) or run this on Node 22\.13 or newer\.$/),
    ]);
    expect(result.stderr, command).not.toMatch(/--store|INTEGRATION_INBOX_STORE|check the path/);
  }
  // The same process without the fake opens the store as usual.
  expect((await runCli(['inbox', 'stats', '--store', existing], {})).code).toBe(0);
}, 60_000);
