// What package.json promises a user: the sample files the command line's help points to are in the
// package, and installing the repository's dependencies prints no install-script warning.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cleanEnv } from '../cli/helpers.ts';
import { registerSrc } from '../support/processes.ts';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };

/** The `--help` text of every command of the command line (test/support/print-help-texts.mjs). */
async function helpTexts(): Promise<string[]> {
  const preload = join(root, 'test', 'support', 'print-help-texts.mjs');
  const { stdout } = await run(process.execPath, ['--import', registerSrc, '--import', preload, join(root, 'src', 'cli', 'index.ts')], { env: cleanEnv(), cwd: root });
  return JSON.parse(stdout) as string[];
}

describe('the package', () => {
  it("ships every sample file the command line's help names", async () => {
    const texts = await helpTexts();
    expect(texts.length).toBeGreaterThan(20);
    const help = texts.join('\n');
    const named = [...new Set([...help.matchAll(/\bexamples\/[\w.-]+\.\w+/g)].map((match) => match[0]))];
    expect(named).toContain('examples/catalog.csv');
    // --ignore-scripts: the list of files, without the build prepack would run first.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    const packed = (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((file) => file.path);
    expect(named.filter((path) => !packed.includes(path))).toEqual([]);
  }, 60_000);
});

describe("the repository's install", () => {
  it('allows, in allowScripts, every dependency in the lockfile that has an install script (npm 11 warns otherwise)', () => {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(withScripts).toContain('esbuild');
    expect(withScripts.filter((name) => manifest.allowScripts?.[name] !== true)).toEqual([]);
  });
});
