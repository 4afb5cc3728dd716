// Checks the built package, not the sources: what a receiver pulls in when it imports
// `integration-sdk/webhooks`, and that each build format shares one class per error.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
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

// zod and p-retry are bundled into dist (see tsup.config.ts), so a bare-import check alone cannot
// see them: the reachable code is also searched for marks of p-retry and of the client pipeline.
const CLIENT_MARKS = ['shouldConsumeRetry', 'onFailedAttempt', "'X-API-Key'", '"X-API-Key"'];

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

  it('the main entry does reach the client pipeline and p-retry, so the checks above can fail', () => {
    const { files } = reachableImports(join(outDir, 'index.js'));
    const code = [...files].map((path) => readFileSync(path, 'utf8')).join('\n');
    expect(code).toContain('shouldConsumeRetry');
    expect(code).toMatch(/["']X-API-Key["']/);
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
