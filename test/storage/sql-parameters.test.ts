// No SQL under src/ uses numbered parameters (`?1`, `?2`): node:sqlite on Node 22.13 to 22.18,
// which the package supports for its SQLite stores, binds them wrongly. Named parameters
// (`:after`, bound as an object) or plain `?` bind the same on every supported Node. Static, so
// that a new statement fails here whichever Node runs the tests.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

// `?` then digits, as SQLite's `?NNN`; TypeScript's `a ? 1 : 2` and `a?.b` do not match.
const NUMBERED = /\?\d+/;

/** Each `file:line: text` of src/ where a numbered parameter appears. */
function numberedParameters(): string[] {
  return sources(root).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => (NUMBERED.test(line) ? [`${relative(root, file)}:${index + 1}: ${line.trim()}`] : [])),
  );
}

test('no SQL statement under src/ uses ?NNN numbered parameters', () => {
  expect(numberedParameters()).toEqual([]);
});

test('the check finds a numbered parameter where there is one', () => {
  expect(NUMBERED.test('WHERE tenant > ?1')).toBe(true);
  expect(NUMBERED.test('WHERE tenant > :after AND ?, ok ? 1 : 2, a?.b')).toBe(false);
});
