// Checks the built package, not the sources: what a receiver pulls in when it imports
// `integration-sdk/webhooks`, and that each build format shares one class per error.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const outDir = join(root, '.tmp', 'dist-test');

/** Every module specifier a built file reaches, following its own relative chunks. */
function reachableImports(entry: string): { bare: Set<string>; files: Set<string> } {
  const bare = new Set<string>();
  const files = new Set<string>();
  const pending = [entry];
  const specifier = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g;
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(specifier)) {
      const name = match[1]!;
      if (name.startsWith('.')) pending.push(resolve(dirname(file), name));
      else bare.add(name);
    }
  }
  return { bare, files };
}

beforeAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(join(root, 'node_modules', '.bin', 'tsup'), ['--out-dir', outDir, '--silent'], {
    cwd: root,
    env: { ...process.env, TSUP_NO_DTS: '1' },
    stdio: 'pipe',
  });
}, 60_000);

// Marks of the client pipeline, in case code of it were copied into a chunk the entry reaches.
const CLIENT_MARKS = ["'X-API-Key'", '"X-API-Key"'];

describe('built webhooks entry', () => {
  for (const file of ['webhooks.js', 'webhooks.cjs']) {
    it(`${file} reaches no HTTP client, retry or throttle code`, () => {
      const { bare, files } = reachableImports(join(outDir, file));
      const heavy = [...bare].filter((name) => /^(ky|p-retry|p-throttle)(\/|$)/.test(name));
      expect(heavy).toEqual([]);
      const code = [...files].map((path) => readFileSync(path, 'utf8')).join('\n');
      expect(CLIENT_MARKS.filter((mark) => code.includes(mark))).toEqual([]);
      // and no Node built-in either: edge runtimes import this entry
      expect([...bare].filter((name) => name.startsWith('node:'))).toEqual([]);
    });
  }

  it('the main entry does reach the client pipeline, ky and p-retry, so the checks above can fail', () => {
    const { bare, files } = reachableImports(join(outDir, 'index.js'));
    expect([...bare]).toEqual(expect.arrayContaining(['ky', 'p-retry', 'zod/mini']));
    const code = [...files].map((path) => readFileSync(path, 'utf8')).join('\n');
    expect(code).toMatch(/["']X-API-Key["']/);
  });
});

describe('dependencies are imported, not copied', () => {
  it('no entry bundles ky, zod or p-retry: an app that has them keeps one copy', () => {
    const code = readdirSync(outDir)
      .filter((name) => /\.(c?js)$/.test(name))
      .map((name) => readFileSync(join(outDir, name), 'utf8'))
      .join('\n');
    // Marks of each library's own source, absent when they stay external imports.
    expect(code).not.toContain('shouldConsumeRetry'); // p-retry
    expect(code).not.toContain('prefixUrl'); // ky
    expect(code).not.toContain('$ZodType'); // zod
  });

  it('the command line is built once, as ESM: no cli.cjs', () => {
    expect(existsSync(join(outDir, 'cli.js'))).toBe(true);
    expect(existsSync(join(outDir, 'cli.cjs'))).toBe(false);
    expect(readFileSync(join(outDir, 'cli.js'), 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  });
});

describe('instanceof across the ESM and CommonJS builds (a process may load both)', () => {
  it('an error of one build is an instance of the same-named class of the other, and of its ancestors only', async () => {
    const esm = await import(pathToFileURL(join(outDir, 'index.js')).href);
    const cjs = createRequire(join(outDir, 'index.cjs'))(join(outDir, 'index.cjs'));
    expect(esm.RateLimitError).not.toBe(cjs.RateLimitError);
    for (const [from, to] of [[esm, cjs], [cjs, esm]]) {
      const rateLimited = new from.RateLimitError({ status: 429, code: 'RATE_LIMITED', message: 'slow down', requestMethod: 'GET', requestPath: '/integration/v1/health', headers: {} });
      expect(rateLimited).toBeInstanceOf(to.RateLimitError);
      expect(rateLimited).toBeInstanceOf(to.ApiError);
      expect(rateLimited).toBeInstanceOf(to.IntegrationError);
      expect(rateLimited).not.toBeInstanceOf(to.ConfigurationError);
      expect(rateLimited).not.toBeInstanceOf(to.NotFoundError);
      const config = new from.ConfigurationError('bad option');
      expect(config).toBeInstanceOf(to.ConfigurationError);
      expect(config).not.toBeInstanceOf(to.ApiError);
      expect(new from.TimeoutError('late')).toBeInstanceOf(to.ConnectionError);
      expect(new from.ConnectionError('down')).not.toBeInstanceOf(to.TimeoutError);
    }
    expect({ name: 'RateLimitError' }).not.toBeInstanceOf(esm.IntegrationError);
    expect(null).not.toBeInstanceOf(esm.IntegrationError);
  });
});

describe('one class per error across entries', () => {
  it('ESM: WebhookVerificationError from both entries is the same class', async () => {
    const main = await import(pathToFileURL(join(outDir, 'index.js')).href);
    const webhooks = await import(pathToFileURL(join(outDir, 'webhooks.js')).href);
    expect(webhooks.WebhookVerificationError).toBe(main.WebhookVerificationError);
    expect(webhooks.verifyWebhook).toBe(main.verifyWebhook);
  });

  it('CommonJS: WebhookVerificationError from both entries is the same class', () => {
    const require = createRequire(join(outDir, 'index.cjs'));
    const main = require(join(outDir, 'index.cjs'));
    const webhooks = require(join(outDir, 'webhooks.cjs'));
    expect(existsSync(join(outDir, 'webhooks.cjs'))).toBe(true);
    expect(webhooks.WebhookVerificationError).toBe(main.WebhookVerificationError);
    const error = new webhooks.WebhookVerificationError('signature_mismatch', 'x');
    expect(error).toBeInstanceOf(main.IntegrationError);
  });
});
