// The package's entries, read from package.json's `exports`: the one list that the build
// (tsup.config.ts), the tests' aliases (vitest.config.ts), the examples' resolve hook
// (test/support/resolve-src.mjs) and the package checks all use, so that an entry added to
// `exports` cannot be forgotten in any of them. Plain JavaScript: it is loaded by Node's module
// hooks and by config files before any TypeScript tooling runs.
import { readFileSync } from 'node:fs';

const packageJsonUrl = new URL('../package.json', import.meta.url);

/**
 * Every subpath export of package.json but `./package.json`, in the order written there. An
 * export `./a/b` whose build is `./dist/a-b.js` is the entry `a-b`, built from `src/a/b/index.ts`
 * (`.` from `src/index.ts`).
 */
export function packageEntries() {
  const manifest = JSON.parse(readFileSync(packageJsonUrl, 'utf8'));
  const entries = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    if (typeof target !== 'object' || target === null) continue;
    const built = target.import?.default;
    const name = typeof built === 'string' ? /^\.\/dist\/([^/]+)\.js$/.exec(built)?.[1] : undefined;
    if (!name) throw new Error(`package.json: the export ${subpath} has no import.default of the form ./dist/<name>.js`);
    entries.push({
      subpath,
      specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
      name,
      source: subpath === '.' ? 'src/index.ts' : `src/${subpath.slice(2)}/index.ts`,
    });
  }
  return entries;
}

/** `{ [entry name]: source }`, the shape of tsup's `entry` option. */
export function buildEntries() {
  return Object.fromEntries(packageEntries().map((entry) => [entry.name, entry.source]));
}
