// Checks the built package, not the sources: what a receiver pulls in when it imports
// `integration-sdk/webhooks`, which dependencies are imported rather than bundled, that each build
// format shares one class per error and that `instanceof` holds across the two builds.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageEntries } from '../../scripts/entries.mjs';

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
  // With declarations: a TypeScript project on `moduleResolution: node` is checked against them below.
  execFileSync(join(root, 'node_modules', '.bin', 'tsup'), ['--out-dir', outDir, '--silent'], { cwd: root, stdio: 'pipe' });
}, 120_000);

/** Marks of the client pipeline: the webhooks entry must not reach them. */
const CLIENT_MARKS = ["'X-API-Key'", '"X-API-Key"', 'throwHttpErrors'];
const ENTRIES = packageEntries().map((entry) => entry.name);

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

  it('the main entry does reach the client pipeline, so the checks above can fail', () => {
    const { files } = reachableImports(join(outDir, 'index.js'));
    const code = [...files].map((path) => readFileSync(path, 'utf8')).join('\n');
    expect(code).toMatch(/["']X-API-Key["']/);
  });
});

describe('the tenants entries', () => {
  // node:sqlite is reached through process.getBuiltinModule, never imported: pg is the driver to look for.
  for (const file of ['tenants', 'tenants-sqlite']) {
    for (const format of ['js', 'cjs']) {
      it(`${file}.${format} loads neither pg nor the dashboard`, () => {
        const { bare } = reachableImports(join(outDir, `${file}.${format}`));
        expect([...bare].filter((name) => /^(pg|hono|@hono\/.*)$/.test(name))).toEqual([]);
      });
    }
  }

  it('tenants-postgres does reach pg, so the check above can fail', () => {
    expect([...reachableImports(join(outDir, 'tenants-postgres.js')).bare]).toContain('pg');
  });
});

describe('dependencies are imported, not bundled', () => {
  for (const file of ['index.js', 'index.cjs']) {
    it(`${file} imports ky, zod/mini and p-retry by name`, () => {
      const { bare, files } = reachableImports(join(outDir, file));
      expect([...bare]).toEqual(expect.arrayContaining(['ky', 'zod/mini', 'p-retry']));
      const code = [...files].map((path) => readFileSync(path, 'utf8')).join('\n');
      // zod's and p-retry's own code is not copied in
      expect(code).not.toContain('shouldConsumeRetry');
      expect(code).not.toContain('$ZodType');
    });
  }

  it('dist holds no file that no entry reaches (no cli.cjs)', () => {
    expect(existsSync(join(outDir, 'cli.cjs'))).toBe(false);
    const reached = new Set<string>();
    for (const entry of [...ENTRIES.flatMap((name) => [`${name}.js`, `${name}.cjs`]), 'cli.js']) {
      for (const file of reachableImports(join(outDir, entry)).files) reached.add(file);
    }
    const built = readdirSync(outDir).filter((name) => /\.(c?js)$/.test(name)).map((name) => join(outDir, name));
    expect(built.filter((file) => !reached.has(file))).toEqual([]);
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

describe('instanceof across the ESM and the CommonJS build (an app loading both)', () => {
  type Sdk = typeof import('../../src/index.ts');
  let esm: Sdk;
  let cjs: Sdk;
  beforeAll(async () => {
    esm = await import(pathToFileURL(join(outDir, 'index.js')).href);
    cjs = createRequire(join(outDir, 'index.cjs'))(join(outDir, 'index.cjs'));
    expect(esm.IntegrationError).not.toBe(cjs.IntegrationError);
  });

  /** The error a client of `sdk` throws on a 429 (one attempt, no limiter). */
  async function rateLimitErrorOf(sdk: Sdk): Promise<unknown> {
    const fetch = async () =>
      new Response(JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'slow down' } }), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' } });
    const client = new sdk.IntegrationClient({ apiKey: 'service_k1_secret', baseUrl: 'https://sdk.test', rateLimit: false, maxRetries: 0, fetch });
    return client.health().catch((error: unknown) => error);
  }

  function configurationErrorOf(sdk: Sdk): unknown {
    try {
      new sdk.IntegrationClient({ apiKey: '', baseUrl: 'http://sdk.test' });
    } catch (error) {
      return error;
    }
    throw new Error('no ConfigurationError');
  }

  it('an error thrown by one build is instanceof the same-named class of the other, and its ancestors', async () => {
    for (const [from, to] of [[esm, cjs], [cjs, esm]] as const) {
      const limited = await rateLimitErrorOf(from);
      expect(limited).toBeInstanceOf(from.RateLimitError);
      expect(limited).toBeInstanceOf(to.RateLimitError);
      expect(limited).toBeInstanceOf(to.ApiError);
      expect(limited).toBeInstanceOf(to.IntegrationError);
      expect(limited).not.toBeInstanceOf(to.ConfigurationError);
      expect(limited).not.toBeInstanceOf(to.AuthenticationError);
      const misconfigured = configurationErrorOf(from);
      expect(misconfigured).toBeInstanceOf(to.ConfigurationError);
      expect(misconfigured).toBeInstanceOf(to.IntegrationError);
      expect(misconfigured).not.toBeInstanceOf(to.ApiError);
    }
  });

  it('a user subclass keeps the ordinary check; plain values are never instances', () => {
    class MyError extends esm.IntegrationError {}
    expect(new esm.IntegrationError('x')).not.toBeInstanceOf(MyError);
    expect(new MyError('x')).toBeInstanceOf(MyError);
    expect(new MyError('x')).toBeInstanceOf(cjs.IntegrationError);
    expect({ name: 'RateLimitError' }).not.toBeInstanceOf(cjs.RateLimitError);
    expect(null).not.toBeInstanceOf(cjs.IntegrationError);
  });
});

describe('TypeScript on moduleResolution node (node10)', () => {
  it('imports the types of integration-sdk/webhooks and the main entry', () => {
    // A scratch project whose node_modules/integration-sdk is this package with the dist just built.
    const scratch = join(root, '.tmp', 'node10-project');
    const pkg = join(scratch, 'node_modules', 'integration-sdk');
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(pkg, { recursive: true });
    copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'));
    symlinkSync(outDir, join(pkg, 'dist'), 'dir');
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'commonjs', moduleResolution: 'node', ignoreDeprecations: '6.0', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['main.ts'] }),
    );
    writeFileSync(
      join(scratch, 'main.ts'),
      [
        "import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'integration-sdk/webhooks';",
        "import { IntegrationClient } from 'integration-sdk';",
        'export function handle(body: string, headers: Record<string, string>, secret: string): WebhookEvent {',
        '  try { return verifyWebhook(body, headers, secret); } catch (error) { if (error instanceof WebhookVerificationError) throw error; throw error; }',
        '}',
        'export const client: IntegrationClient | undefined = undefined;',
        '',
      ].join('\n'),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', scratch], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);
});
