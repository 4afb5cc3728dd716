// Every ```ts sample in the README and in docs/ must compile against the real package types, so
// the documentation cannot drift from the API.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const workDir = join(root, '.tmp', 'doc-samples');

function samples(file: string): { name: string; code: string }[] {
  const text = readFileSync(join(root, file), 'utf8');
  const blocks = [...text.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)];
  return blocks
    .map((match, index) => ({ name: `${file.replace(/[/.]/g, '_')}_${index}`, code: match[1]! }))
    // A sample marked `// not compiled` shows a fragment on purpose (e.g. a config line).
    .filter((sample) => !sample.code.includes('// not compiled'));
}

const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('code samples in the README and docs compile', () => {
  it('type-checks every sample', () => {
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    // Names a fragment may use without declaring them; a sample that declares its own shadows these.
    const prelude = join(workDir, 'prelude.d.ts');
    writeFileSync(
      prelude,
      [
        "import type { IntegrationClient } from 'integration-sdk';",
        'declare global {',
        '  const client: IntegrationClient;',
        '  const rawBody: string;',
        '  const headers: Headers;',
        '  const secret: string;',
        '}',
        'export {};',
      ].join('\n'),
    );
    const paths: string[] = [prelude];
    for (const file of files) {
      for (const sample of samples(file)) {
        const path = join(workDir, `${sample.name}.ts`);
        // Each sample is its own module, with top-level await allowed.
        writeFileSync(path, `${sample.code}\nexport {};\n`);
        paths.push(path);
      }
    }
    expect(paths.length).toBeGreaterThan(6);
    const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const program = ts.createProgram(paths, { ...config.options, noUnusedLocals: false });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && paths.includes(resolve(d.file.fileName)))
      .map((d) => `${d.file!.fileName.replace(workDir + '/', '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
  }, 60_000);
});
