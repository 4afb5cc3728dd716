import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, describe, expect, test } from 'vitest';
import { sqliteStore } from '../../src/inbox/sqlite/index.ts';
import { createTenants } from '../../src/tenants/index.ts';
import { sqliteTenantStore } from '../../src/tenants/sqlite/index.ts';
import { startReceiver, startSandbox } from '../e2e/helpers.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { cleanEnv, cliArgs, runCli } from './helpers.ts';

/** `integration-sdk dashboard` with `args` and `env`; resolves with its one-time link once it serves. */
async function startDashboard(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, cliArgs(['dashboard', ...args, '--port', '0']), { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const link = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(output);
      if (match?.[1] && output.includes('Ctrl-C')) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  return { child, link, output: () => output };
}

const dir = tempDir('cli-dashboard');
afterAll(() => dir.remove());

describe('integration-sdk dashboard', () => {
  test('--help shows the options and an example', async () => {
    const help = await runCli(['dashboard', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--store <location>[\s\S]*--port <n>[\s\S]*--bind <address>[\s\S]*--token-file <path>/);
    expect(help.stdout).toMatch(/Example:\n\s+integration-sdk dashboard --store/);
  });

  test('refuses --bind beyond loopback without a token of your own, and a missing store', async () => {
    const bind = await runCli(['dashboard', '--store', `${dir.path}/none.db`, '--bind', '0.0.0.0']);
    expect(bind.code).toBe(2);
    expect(bind.stderr).toMatch(/--token-file <path> or DASHBOARD_TOKEN/);
    const store = sqliteStore({ path: `${dir.path}/keyless.db` });
    await store.migrate();
    await store.close();
    // The sync panel's state is kept per key scope: without a key there is nothing to show.
    const keyless = await runCli(['dashboard', '--store', `${dir.path}/keyless.db`, '--state', `${dir.path}/state.db`]);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toMatch(/--state needs the service key/);
    const missing = await runCli(['dashboard', '--store', `${dir.path}/none.db`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/No inbox database/);
  });

  test('serves on 127.0.0.1, prints a link that signs in once, and stops on SIGTERM', async () => {
    const path = `${dir.path}/inbox.db`;
    const store = sqliteStore({ path });
    await store.migrate();
    await store.close();
    const { child, link } = await startDashboard(['--store', path]);
    const url = new URL(link);
    expect((await fetch(url.origin)).status).toBe(401);
    const signIn = await fetch(link, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/');
    const cookie = signIn.headers.getSetCookie().map((each) => each.split(';')[0]).join('; ');
    const overview = await fetch(url.origin, { headers: { cookie } });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain('Entries by status');
    // The link in scrollback signs nobody else in: it says it was used and how to get a new one.
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(await again.text()).toMatch(/already used[\s\S]*restart[\s\S]*--token-file/);
    expect((await fetch(`${url.origin}/api/stats`, { headers: { authorization: `Bearer ${url.searchParams.get('token')}` } })).status).toBe(401);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  test('--tenants adds the Tenants page, each tenant with its status, and never prints or shows a secret', async () => {
    const sandbox = await startSandbox({ merchants: [{}] });
    const receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const tenantsPath = `${dir.path}/tenants.db`;
    const encryptionKey = randomBytes(32).toString('base64');
    const apiKey = sandbox.merchants[0]!.keys[0]!.apiKey;
    const registry = createTenants({ store: sqliteTenantStore({ path: tenantsPath }), encryptionKey, baseUrl: sandbox.url, webhookUrl: (id) => `${receiver.url}/integration/${id}` });
    await registry.connect('loja-a', { apiKey });
    await registry.close();
    const store = sqliteStore({ path: `${dir.path}/tenants-inbox.db` });
    await store.migrate();
    await store.close();

    const { child, link, output } = await startDashboard(['--store', `${dir.path}/tenants-inbox.db`, '--tenants', tenantsPath], { INTEGRATION_TENANTS_KEY: encryptionKey, INTEGRATION_BASE_URL: sandbox.url });
    try {
      expect(output()).toMatch(/Tenants: on/);
      const signIn = await fetch(link, { redirect: 'manual' });
      const cookie = signIn.headers.getSetCookie().map((each) => each.split(';')[0]).join('; ');
      const page = await (await fetch(`${new URL(link).origin}/tenants`, { headers: { cookie } })).text();
      expect(page).toMatch(/<a href="\/t\/loja-a\/">loja-a<\/a>[\s\S]*active[\s\S]*delivering/);
      for (const text of [page, output()]) {
        expect(text).not.toContain(apiKey.split('_')[2]!);
        expect(text).not.toContain(encryptionKey);
        expect(text).not.toMatch(/whsec_/);
      }
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
