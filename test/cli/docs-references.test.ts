// Every file the docs name resolves for someone who has only the repository: docs/*.md and the
// README may not point at design notes or specifications kept elsewhere.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pages = [...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f)), join(root, 'README.md')];

/** File names a page refers to: link targets, and `.md` names in code spans or prose. */
function references(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) if (!/^[a-z]+:/.test(m[1]!)) found.add(m[1]!);
  for (const m of text.matchAll(/(?<![\w/.<-])((?:\.\.?\/)?[\w.-]+(?:\/[\w.*-]+)*\.md)\b/g)) found.add(m[1]!);
  return [...found];
}

test('every .md file or link a page names exists in the repository', () => {
  const missing: string[] = [];
  for (const page of pages) {
    for (const name of references(readFileSync(page, 'utf8'))) {
      const candidates = [normalize(join(dirname(page), name)), normalize(join(root, name))];
      if (!candidates.some((path) => existsSync(path))) missing.push(`${page.slice(root.length)}: ${name}`);
    }
  }
  expect(missing).toEqual([]);
});
