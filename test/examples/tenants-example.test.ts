// examples/tenants.ts is a script a vendor runs: run it as a real Node process (against the local
// sandbox it starts itself) twice on one database, and check what it prints.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const workDir = mkdtempSync(join(tmpdir(), 'sdk-tenants-example-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

it('tenants.ts connects three merchants, works each one, and recovers a revoked key', async () => {
  const { stdout } = await run(process.execPath, ['--import', join(root, 'test/support/register-src.mjs'), join(root, 'examples', 'tenants.ts')], {
    cwd: workDir,
    env: { PATH: process.env.PATH, NODE_NO_WARNINGS: '1' },
    timeout: 30_000,
  });
  const lines = stdout.trim().split('\n');
  expect(lines.filter((line) => line.startsWith('connected loja-'))).toHaveLength(3);
  expect(lines.filter((line) => /^loja-\d: catalog \{"created":[01],"updated":[01],"errors":0\}$/.test(line))).toHaveLength(3);
  expect(stdout).toMatch(/loja-2: key refused at \d{4}-.*; asking the merchant for a new one\nkey_invalid: loja-2\nloja-2: active again, health ok/);
  expect(stdout).not.toMatch(/service_|whsec_/);
});
