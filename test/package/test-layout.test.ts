// test/ mirrors src/ (the project's layout rule): a reader looks for the tests of src/a/b.ts under
// test/a/. Folders that test across the layers say what they hold instead.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Tests of the whole: over sockets end to end, the packed package and its docs, the examples, the
// shared conformance suites run against every store.
const ACROSS = ['e2e', 'package', 'examples', 'conformance'];
const HELPERS = ['support', 'fixtures'];

function folders(base: string, skip: (name: string, depth: number) => boolean, depth = 0): string[] {
  return readdirSync(base, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !skip(entry.name, depth))
    .flatMap((entry) => {
      const path = join(base, entry.name);
      return [relative(base, path), ...folders(path, skip, depth + 1).map((inner) => join(entry.name, inner))];
    });
}

const srcFolders = new Set(folders(join(root, 'src'), () => false));
const testFolders = folders(join(root, 'test'), (name, depth) => HELPERS.includes(name) || (depth === 0 && ACROSS.includes(name)));

it('every folder of test/ is the twin of a folder of src/', () => {
  expect(testFolders.filter((folder) => !srcFolders.has(folder))).toEqual([]);
});

it('every top-level folder of src/ has its twin in test/', () => {
  const topLevel = [...srcFolders].filter((folder) => !folder.includes('/'));
  expect(topLevel.filter((folder) => !testFolders.includes(folder))).toEqual([]);
});
