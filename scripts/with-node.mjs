#!/usr/bin/env node
// Runs a project command under a Node the toolchain supports. The machine's Node may be older
// (Node 20 is end of life; tsup needs 22.18+, and the demo, the examples and the benchmarks run as
// TypeScript with Node's type stripping, on by default from 22.18): then this script fetches Node
// 24 from the npm registry into .tools/ once, says so in one line, and re-runs itself under it.
// Plain JavaScript on purpose: it must start on any Node.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from './node-binary.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [command, ...args] = process.argv.slice(2);
const [major, minor] = process.versions.node.split('.').map(Number);
// tsup's own engines (^22.18.0 || ^24.11.0 || >=26.0.0), the strictest of the toolchain's.
const toolchainReady = (major === 22 && minor >= 18) || (major === 24 && minor >= 11) || major >= 26;

function run(file, argv, env = process.env) {
  const result = spawnSync(file, argv, { stdio: 'inherit', cwd: root, env });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function withPath(binDir) {
  return { ...process.env, PATH: `${binDir}:${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` };
}

/** `environment` without the quick build's flag (scripts/build-quick.mjs), so tsup writes declarations. */
function withoutQuickBuildFlag(environment) {
  const { TSUP_NO_DTS: _quick, ...rest } = environment;
  return rest;
}

if (!toolchainReady) {
  if (process.env.WITH_NODE_FETCHED) {
    console.error(`[with-node] the Node 24 in .tools/ is ${process.versions.node}, too old for the toolchain: delete .tools/node-24 and run again.`);
    process.exit(2);
  }
  const bin = nodeBinary('24');
  const { file, pre } = bin ? { file: bin, pre: [] } : { file: 'npx', pre: ['-y', '-p', 'node@24', '--', 'node'] };
  console.error(`[with-node] Node ${process.versions.node} cannot run the toolchain (it needs 22.18+ or 24.11+): re-running under Node 24 from the npm registry.`);
  const env = { ...(file === 'npx' ? process.env : withPath(dirname(file))), WITH_NODE_FETCHED: '1' };
  process.exit(run(file, [...pre, fileURLToPath(import.meta.url), command, ...args], env));
}

const env = withPath(dirname(process.execPath));
const node = process.execPath;
// A fresh clone has no node_modules yet: install the locked dependencies once, so that each
// README command works as the first thing a user types (but not before `with-node.mjs npm ci`,
// which would install them a second time).
const installs = command === 'npm' && ['ci', 'install', 'i'].includes(args[0] ?? '');
if (!installs && !existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.error('[with-node] node_modules is missing: running npm ci first.');
  const status = run('npm', ['ci', '--no-audit', '--no-fund'], env);
  if (status !== 0) process.exit(status);
}
const tools = {
  // The full build, declarations included, whatever the caller's environment says: what `npm pack`
  // and `npm publish` ship (prepack), however dist/ was built before.
  build: () => run('tsup', args, withoutQuickBuildFlag(env)),
  // Built entry points are what users import, so the demo and the sandbox command run the build.
  demo: () => run(node, [join('scripts', 'build-quick.mjs')], env) || run(node, [join('examples', 'demo.ts'), ...args], env),
  sandbox: () => run(node, [join('scripts', 'build-quick.mjs')], env) || run(node, [join('dist', 'cli.js'), 'sandbox', ...args], env),
  bench: () => run(node, [join('scripts', 'build-quick.mjs')], env) || run(node, ['--expose-gc', join('bench', 'run.ts'), ...args], env),
};
if (!command) {
  console.error('usage: node scripts/with-node.mjs <tool|build|demo|sandbox|bench> [args...]');
  process.exit(2);
}
process.exit(tools[command] ? tools[command]() : run(command, args, env));
