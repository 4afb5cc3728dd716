// package.json's exports are the one list of the package's entries: each must have its source,
// its types for TypeScript on `moduleResolution: node`, and resolve to that source wherever the
// repository imports the package by name (vitest, the examples' resolve hook, tsc), so that
// `npm test` on a fresh clone, with no dist/, runs everything against the sources.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageEntries } from '../../scripts/entries.mjs';
import { resolve as resolveForExamples } from '../support/resolve-src.mjs';

const root = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  typesVersions: Record<string, Record<string, string[]>>;
};
const entries = packageEntries();

describe("package.json's exports", () => {
  it('lists every entry, each built from an existing src/<subpath>/index.ts', () => {
    expect(entries.map((entry) => entry.subpath)).toEqual(Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json'));
    expect(entries.map((entry) => entry.specifier)).toContain('integration-sdk/sync/postgres');
    expect(entries.filter((entry) => !existsSync(join(root, entry.source)))).toEqual([]);
  });

  it('give every subpath its declarations in typesVersions, for moduleResolution node', () => {
    const typesVersions = manifest.typesVersions['*'] ?? {};
    for (const entry of entries.filter((e) => e.subpath !== '.')) {
      expect(typesVersions[entry.subpath.slice(2)], entry.subpath).toEqual([`./dist/${entry.name}.d.ts`]);
    }
  });
});

describe('each entry resolves to its source', () => {
  it.each(entries.map((entry) => [entry.specifier, entry]))('%s: in the examples run as processes (the resolve hook)', async (specifier, entry) => {
    const next = () => Promise.reject(new Error(`${specifier} fell through to Node's resolution (dist/)`));
    const resolved = await resolveForExamples(specifier, { conditions: [], importAttributes: {}, parentURL: undefined }, next);
    expect(resolved.url).toBe(pathToFileURL(join(root, entry.source)).href);
  });

  it.each(entries.map((entry) => [entry.specifier, entry]))('%s: in the tests (the vitest alias)', async (specifier, entry) => {
    const byName = await import(/* @vite-ignore */ specifier);
    const bySource = await import(/* @vite-ignore */ join(root, entry.source));
    expect(byName).toBe(bySource);
  });

  it('in TypeScript (tsconfig paths), for every entry', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const importer = join(root, 'examples', 'health.ts');
    const resolved = entries.map((entry) => ts.resolveModuleName(entry.specifier, importer, config.options, ts.sys).resolvedModule?.resolvedFileName);
    expect(resolved).toEqual(entries.map((entry) => join(root, entry.source)));
  });

  it('a name that is not exported resolves nowhere in the hook', async () => {
    const fellThrough = await resolveForExamples('integration-sdk/cli', { conditions: [], importAttributes: {}, parentURL: undefined }, async () => ({ url: 'next:' }));
    expect(fellThrough.url).toBe('next:');
  });
});
