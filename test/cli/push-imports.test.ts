// The push layer reads one way (issue 29 item 14): push.ts hands a push with a state to
// sync-push.ts, which uses sync-commands.ts; none of them imports back, at run time or for types.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const cli = fileURLToPath(new URL('../../src/cli/', import.meta.url));
const PUSH_LAYER = ['push.ts', 'sync-push.ts', 'sync-commands.ts', 'push-options.ts'];

/** The files of src/cli a file imports or re-exports from, `import type` included. */
function importsOf(file: string): string[] {
  const text = readFileSync(resolve(cli, file), 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.\/[^']+)'/gms)].map((match) => match[1]!);
  return specifiers.map((specifier) => resolve(dirname(resolve(cli, file)), specifier)).filter((path) => dirname(path) === resolve(cli).replace(/\/$/, '')).map((path) => path.slice(resolve(cli).length + 1));
}

/** An import path from `from` back to itself, if there is one. */
function cycleThrough(from: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (file: string, path: string[]): string[] | undefined => {
    for (const next of importsOf(file)) {
      if (next === from) return [...path, next];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(from, [from]);
}

test('no import cycle passes through the push commands', () => {
  for (const file of PUSH_LAYER) expect(cycleThrough(file), file).toBeUndefined();
  // The layer's direction itself: the sync side never imports the plain push.
  expect(importsOf('sync-push.ts')).not.toContain('push.ts');
  expect(importsOf('sync-commands.ts')).not.toContain('push.ts');
  expect(importsOf('push.ts')).toContain('sync-push.ts');
});
