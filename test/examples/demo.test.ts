// `npm run demo` is the README's first command: the same script, run here against the sources.
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

describe('the demo', () => {
  it('walks the 12 recommended integration steps and exits 0', async () => {
    const { stdout } = await run(process.execPath, ['--import', join(root, 'test/support/register-src.mjs'), join(root, 'examples/demo.ts')], {
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      timeout: 30_000,
    });
    const steps = stdout.split('\n').filter((line) => line.startsWith('✔'));
    expect(steps).toHaveLength(12);
    expect(stdout).toContain('All 12 steps passed.');
  });
});
