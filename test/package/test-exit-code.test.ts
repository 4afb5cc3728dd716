// The README's test command must fail when a test fails: CI and every user read its exit code. It
// once exited 0 whatever the tests said (a dependency loaded by the global setup hooked
// 'beforeExit' to call process.exit(0)). Runs vitest with the project's own config, global setup
// included, on one test that fails.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** Runs vitest on one probe test file holding `body`; its exit code and output. */
function runProbe(body: string): { status: number | null; output: string } {
  const probe = join('test', 'package', `exit-code-probe-${process.pid}.test.ts`);
  writeFileSync(join(root, probe), `import { expect, it } from 'vitest';\n${body}\n`);
  try {
    const run = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', probe], { cwd: root, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
    return { status: run.status, output: run.stdout + run.stderr };
  } finally {
    rmSync(join(root, probe), { force: true });
  }
}

it('exits 1 when a test fails and 0 when every test passes, with the global setup of every run', () => {
  const failed = runProbe("it('fails on purpose', () => expect(1).toBe(2));");
  expect(failed.output).toMatch(/1 failed/);
  expect(failed.status).toBe(1);
  const passed = runProbe("it('passes', () => expect(1).toBe(1));");
  expect(passed.output).toMatch(/1 passed/);
  expect(passed.status).toBe(0);
}, 120_000);
