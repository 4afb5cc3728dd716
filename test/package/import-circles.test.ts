// Every layer reads one way (docs/architecture.md): no file of src/ reaches itself again through
// its imports, type-only imports included (a reader follows them too). The sandbox's own layers
// (http → routes → platform → state), the CLI's commands and the inbox's receiving files had
// circles before; a new one fails here with the files it passes through.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files of src/ a file imports or re-exports from. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]!);
  return specifiers.map((specifier) => resolve(dirname(file), specifier)).filter((path) => path.startsWith(root));
}

/** Every circle, each as the files it passes through, found by a depth-first walk. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const walk = (file: string, path: string[]) => {
    const at = path.indexOf(file);
    if (at !== -1) {
      found.push([...path.slice(at), file].map((f) => relative(root, f)));
      return;
    }
    if (done.has(file)) return;
    for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
    done.add(file);
  };
  for (const file of graph.keys()) walk(file, []);
  return found;
}

test('src/ has no import circle', () => {
  const graph = new Map(sources(root).map((file) => [file, importsOf(file)]));
  expect(graph.size).toBeGreaterThan(200);
  expect([...graph.values()].flat().length).toBeGreaterThan(500); // the imports were read
  expect(circles(graph)).toEqual([]);
});
