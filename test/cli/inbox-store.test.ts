// On a Node the SQLite stores cannot run on (below 22.13), every inbox command with a SQLite store
// says so in one line (which parts need which Node, as the README's table has it) and exits 2,
// never blaming the store option; `doctor --store` runs its other checks and reports the store as a
// failed check (exit 1). The Node is faked: the feature detection of node:sqlite finds nothing in
// the CLI process, which reports the Node version it is given (test/support/hide-node-sqlite.mjs).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { runCli } from './helpers.ts';

const dir = tempDir('cli-old-node');
const hide = pathToFileURL(fileURLToPath(new URL('../support/hide-node-sqlite.mjs', import.meta.url))).href;
const existing = `${dir.path}/inbox.db`;
let sandbox: Sandbox;

beforeAll(async () => {
  const store = sqliteStore({ path: existing });
  await store.migrate();
  await store.close();
  sandbox = await createSandbox({ rate: false });
});
afterAll(async () => {
  await sandbox.close();
  dir.remove();
});

/** What the SQLite stores say on Node 22.12 (the client's floor) and on Node 20 (below it). */
const sentences = {
  '22.12.0': 'The SQLite stores need Node 22.13 or newer (node:sqlite) and this is Node 22.12.0: use a Postgres store (a postgres:// URL), which works on every Node the package supports (22.12 and newer), as the client and webhooks do, or upgrade Node to 22.13 or newer.',
  '20.20.2': 'The SQLite stores need Node 22.13 or newer (node:sqlite) and this is Node 20.20.2, older than the 22.12 the whole package needs: a Postgres store works on every Node the package supports (22.12 and newer), as the client and webhooks do, but not on this one; upgrade Node to 22.13 or newer.',
};

function onNode(version: keyof typeof sentences, extra: Record<string, string> = {}) {
  return { NODE_OPTIONS: `--import=${hide}`, HIDE_NODE_SQLITE_VERSION: version, INTEGRATION_API_KEY: 'service_k1_abcdefghijklmnopqrstuvwx', INTEGRATION_BASE_URL: 'http://127.0.0.1:9/integration/v1', ...extra };
}

test.each(Object.keys(sentences) as Array<keyof typeof sentences>)('a SQLite --store on Node %s without node:sqlite: every inbox command says what needs which Node in one line, exit 2', async (version) => {
  const commands = [
    ['inbox', 'stats', '--store', existing],
    ['inbox', 'dead', '--store', `${dir.path}/missing.db`],
    ['inbox', 'retry', 'd-1', '--store', existing],
    ['inbox', 'retry-dead', '--store', existing],
    ['inbox', 'reconcile', '--store', existing],
    ['inbox', 'reconcile', '--store', existing, '--ack', 'all'],
  ];
  const results = await Promise.all(commands.map((args) => runCli(args, { env: onNode(version) })));
  for (const [index, result] of results.entries()) {
    const command = commands[index]!.join(' ');
    expect(result.code, command).toBe(2);
    expect(result.stdout, command).toBe('');
    expect(result.stderr.trim().split('\n'), command).toEqual([sentences[version]]);
    expect(result.stderr, command).not.toMatch(/--store|INTEGRATION_INBOX_STORE|check the path/);
  }
  // The same process without the fake opens the store as usual.
  expect((await runCli(['inbox', 'stats', '--store', existing], {})).code).toBe(0);
}, 60_000);

test('doctor --store there runs every other check and reports the store as a failed check, exit 1', async () => {
  const env = onNode('20.20.2', { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url, INTEGRATION_RATE_LIMIT: 'off' });
  const result = await runCli(['doctor', '--store', existing], { env });
  expect(result.stderr).toBe('');
  expect(result.stdout).toMatch(/^ok\s+key\s+accepted for merchant/m);
  expect(result.stdout).toMatch(/^ok\s+scopes\s/m);
  expect(result.stdout).toMatch(/^(ok|warn)\s+webhooks?\b/m);
  expect(result.stdout.trim().split('\n').at(-1)).toMatch(new RegExp(`^fail\\s+inbox\\s+${sentences['20.20.2'].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  expect(result.code).toBe(1);

  const json = await runCli(['doctor', '--store', existing, '--json'], { env });
  expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, checks: expect.arrayContaining([{ check: 'inbox', status: 'fail', detail: sentences['20.20.2'] }]) });
  expect(json.code).toBe(1);
}, 60_000);
