// The command line bundled from the current sources into one ESM file for Node (as tsup ships
// dist/cli.js, its dependencies bundled too), written once per test run. A CLI process started from
// it is still a real process running the current sources, but it starts in a sixth of the time
// Node takes to type-strip and resolve the hundred-odd source files of src/cli/index.ts.
// test/cli/built.test.ts runs the real build.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliBundle {
  /** The bundled `src/cli/index.ts`: run it as `node <path> ...args`. */
  path: string;
  /** Bundles the sources again (a rerun in watch mode sees the sources as they are now). */
  rebuild(): Promise<void>;
  remove(): void;
}

export async function bundleCli(): Promise<CliBundle> {
  // Inside the repository, so that the bundle's imports of dependencies resolve to its node_modules.
  const dir = join(root, '.tmp', `test-cli-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'cli.mjs');
  const { peerDependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  const rebuild = async () => {
    await build({
      entryPoints: [join(root, 'src/cli/index.ts')],
      outfile: path,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      // The dependencies bundled too (a process loading one file starts in half the time of one
      // resolving and loading each package); the optional peers stay imports, as users install them.
      external: Object.keys(peerDependencies),
      // For the CommonJS dependencies (commander) requiring Node's modules from an ES module.
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      logLevel: 'error',
    });
  };
  await rebuild();
  return { path, rebuild, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
