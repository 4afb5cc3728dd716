// Facts the pages repeat, checked against the code they describe: the retry window of the
// platform's schedule, the sandbox's port, and the command line's synopsis in docs/cli.md.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RETRY_DELAYS_SECONDS } from 'integration-sdk/sandbox';
import { DEFAULT_SANDBOX_PORT } from '../../src/cli/sandbox.ts';
import { duration } from '../../src/cli/sandbox-format.ts';
import { cleanEnv } from '../cli/helpers.ts';
import { registerSrc } from '../support/processes.ts';

const root = resolve(import.meta.dirname, '../..');
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = (page: string) => readFileSync(join(root, page), 'utf8').replace(/\s+/g, ' ');

describe("the platform's retry schedule, as the pages tell it", () => {
  const window = duration(RETRY_DELAYS_SECONDS.reduce((sum, seconds) => sum + seconds, 0) * 1000);
  const attempts = RETRY_DELAYS_SECONDS.length + 1;

  it('is computed from the schedule: 6 attempts, the last 14 h 36 min after the first', () => {
    expect([attempts, window]).toEqual([6, '14 h 36 min']);
  });

  it.each(pages)('%s: the window is about 14 h 36 min (14 h 35 min only as the spec rounding it)', (page) => {
    const wrong = [...text(page).matchAll(/14 h \d+ min/g)]
      .filter((match) => match[0] !== window && !/rounds it to $/.test(text(page).slice(Math.max(0, match.index - 40), match.index)))
      .map((match) => text(page).slice(Math.max(0, match.index - 60), match.index + 20));
    expect(wrong).toEqual([]);
  });

  it.each(pages)('%s: 6 attempts, 5 retries', (page) => {
    const counts = (pattern: RegExp) => [...text(page).matchAll(pattern)].map((match) => match[1]!.toLowerCase());
    const words: Record<string, number> = { five: 5, six: 6 };
    const number = (word: string) => words[word] ?? Number(word);
    expect(counts(/\b(\w+) attempts in about 14 h/g).map(number).filter((n) => n !== attempts)).toEqual([]);
    expect(counts(/\bretries (\w+) times over/g).map(number).filter((n) => n !== attempts - 1)).toEqual([]);
  });
});

describe('the sandbox on the command line', () => {
  it.each(pages)(`%s: starts it on its port, ${DEFAULT_SANDBOX_PORT} (or 0, a free one)`, (page) => {
    const ports = [...text(page).matchAll(/sandbox \[?--port (\d+)/g)].map((match) => Number(match[1]));
    expect(ports.filter((port) => port !== DEFAULT_SANDBOX_PORT && port !== 0)).toEqual([]);
  });
});

describe("docs/cli.md's synopsis", () => {
  it('names every command of the command line and every option of each', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', registerSrc, '--import', join(root, 'test/support/print-help-texts.mjs'), join(root, 'src/cli/index.ts')], { env: cleanEnv(), cwd: root });
    const help = JSON.parse(stdout) as string[];
    const page = readFileSync(join(root, 'docs', 'cli.md'), 'utf8');
    const synopsis = /^```\n(integration-sdk [\s\S]*?)```/m.exec(page)![1]!;
    // An entry: a line starting with `integration-sdk`, and the indented lines below it.
    const entries = synopsis.split(/\n(?=integration-sdk )/);
    const missing: string[] = [];
    for (const text of help) {
      const usage = /^Usage: integration-sdk (.*?)(?: \[options\])?(?: \[command\])?(?: <.*)?$/m.exec(text)![1]!;
      if (text.includes('\nCommands:\n') && usage !== '') continue; // a group: its commands are checked
      const words = usage === '' ? [] : usage.split(' ');
      const options = [...text.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((match) => match[1]!).filter((option) => option !== '--help');
      const has = (entry: string, token: string) => new RegExp(`(?<![\\w-])${token}(?![\\w-])`).test(entry);
      if (!entries.some((entry) => [...words, ...options].every((token) => has(entry, token)))) missing.push(`${usage || '(the program)'} ${options.join(' ')}`);
    }
    expect(help.length).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });
});

describe('CHANGELOG.md', () => {
  it('has only Keep a Changelog headings: a release per ##, its changes under Added, Changed, Deprecated, Removed, Fixed or Security', () => {
    const headings = readFileSync(join(root, 'CHANGELOG.md'), 'utf8').split('\n').filter((line) => line.startsWith('##'));
    const wrong = headings.filter((line) => !/^## \[(Unreleased|\d+\.\d+\.\d+)\]( - \d{4}-\d{2}-\d{2})?$/.test(line) && !/^### (Added|Changed|Deprecated|Removed|Fixed|Security)$/.test(line));
    expect(wrong).toEqual([]);
    // Each release lists a kind of change once.
    for (const release of readFileSync(join(root, 'CHANGELOG.md'), 'utf8').split(/^## /m).slice(1)) {
      const kinds = release.split('\n').filter((line) => line.startsWith('### '));
      expect(new Set(kinds).size, release.split('\n')[0]).toBe(kinds.length);
    }
  });
});
