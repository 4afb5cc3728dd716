// Every ```ts sample in the README and in docs/ must compile against the real package types, so
// the documentation cannot drift from the API. The README's samples are also run, against the
// sandbox started from the command line, with the environment of the `export` line it prints.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/free-port.ts';
import { RedisServer, skipRedis } from '../redis/redis-server.ts';
import { registerSrc, startSandboxCommand, type RunningProcess } from '../support/processes.ts';

const root = resolve(import.meta.dirname, '../..');
const workDir = join(root, '.tmp', 'doc-samples');
const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;

interface Sample {
  name: string;
  /** The `## ` heading the sample sits under. */
  section: string;
  code: string;
}

function samples(file: string): Sample[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)]
    .map((match, index) => ({
      name: `${file.replace(/[/.]/g, '_')}_${index}`,
      section: [...text.slice(0, match.index).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '',
      code: match[1]!,
    }))
    // A sample marked `// not compiled` shows a fragment on purpose (e.g. a config line).
    .filter((sample) => !sample.code.includes('// not compiled'));
}

let previous: ts.Program | undefined;
/** Type errors of `paths` (each its own module, where top-level await is allowed). */
function typeErrors(paths: string[]): string[] {
  // The previous program's parsed files (the libraries, src/) are reused.
  const program = ts.createProgram({ rootNames: paths, options: { ...config.options, noUnusedLocals: false }, oldProgram: previous });
  previous = program;
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && paths.includes(resolve(d.file.fileName)))
    .map((d) => `${d.file!.fileName.replace(`${workDir}/`, '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

const readme = samples('README.md');
const quickStart = readme.find((sample) => sample.section === 'Quick start')!;
/**
 * The README's stated preamble: a sample that imports an entry of its own (`integration-sdk/inbox`,
 * `/sync`...) is a file of its own, compiled and run as written; any other that uses `client`
 * continues the quick start's file.
 */
const readmeSource = (sample: Sample) =>
  sample !== quickStart && !/from 'integration-sdk\//.test(sample.code) && /\bclient\b/.test(sample.code) ? `${quickStart.code}\n${sample.code}` : sample.code;

function writeSample(name: string, code: string): string {
  const path = join(workDir, `${name}.ts`);
  writeFileSync(path, `${code}\nexport {};\n`);
  return path;
}

beforeAll(() => {
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
});

describe('code samples in docs/ compile', () => {
  it('type-checks every sample', () => {
    // Names a fragment of a docs page may use without declaring them; a sample that declares its own shadows these.
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
    const pages = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const paths = [prelude, ...pages.flatMap((page) => samples(page).map((sample) => writeSample(sample.name, sample.code)))];
    expect(paths.length).toBeGreaterThan(6);
    expect(typeErrors(paths)).toEqual([]);
  }, 60_000);
});

describe("the README's samples", () => {
  it('compile under strict as written, or after the quick start when they use its client', () => {
    expect(readme.length).toBeGreaterThan(10);
    expect(quickStart.code).toContain('const client = new IntegrationClient');
    const paths = readme.map((sample) => writeSample(sample.name, readmeSource(sample)));
    expect(typeErrors(paths)).toEqual([]);
  }, 60_000);

  describe('run against the sandbox', () => {
    let sandbox: RunningProcess;
    let exportLine: string;
    let redis: RedisServer | undefined;
    let env: Record<string, string>;
    let cwd: string;
    const run = promisify(execFile);

    beforeAll(async () => {
      const started = await startSandboxCommand();
      sandbox = started.process;
      exportLine = started.exportLine;
      if (!skipRedis) redis = await RedisServer.start();
      const baseUrl = started.env.INTEGRATION_BASE_URL!;
      const apiKey = started.env.INTEGRATION_API_KEY!;
      // The receivers' secret is one the sandbox issued, as the README says.
      const created = await fetch(`${baseUrl}/integration/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/webhooks', events: ['order.created'] }),
      });
      const { secret } = (await created.json()) as { secret: string };
      env = {
        ...started.env,
        WEBHOOK_SECRET: secret,
        DASHBOARD_TOKEN: randomBytes(24).toString('hex'),
        TENANTS_KEY: randomBytes(32).toString('base64'),
        PORT: String(await freePort()),
        ...(redis ? { REDIS_URL: redis.url } : {}),
      };
      cwd = mkdtempSync(join(tmpdir(), 'readme-samples-'));
    }, 60_000);

    afterAll(async () => {
      await sandbox?.stop();
      await redis?.stop();
      if (cwd) rmSync(cwd, { recursive: true, force: true });
    });

    /** Runs a sample's file to the end of its top-level code; a server it starts is then stopped. */
    async function runSample(sample: Sample): Promise<string> {
      const file = writeSample(`${sample.name}_run`, readmeSource(sample));
      const script = `await import(${JSON.stringify(pathToFileURL(file).href)}); process.exit(0);`;
      const { stdout } = await run(process.execPath, ['--import', registerSrc, '--input-type=module', '-e', script], {
        cwd,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_NO_WARNINGS: '1', ...env },
        timeout: 30_000,
      });
      return stdout;
    }

    it("quotes the sandbox's export line as the sandbox prints it (on its default port)", () => {
      expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`\n${exportLine.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:4010')}\n`);
    });

    // The webhook receivers are run with genuine and forged deliveries in readme-webhooks.test.ts.
    const runnable = readme.filter((sample) => sample.section !== 'Receiving webhooks' && !(skipRedis && sample.code.includes("from 'redis'")));

    /** The URLs of the key's webhook endpoints, as the service lists them. */
    async function endpointUrls(): Promise<string[]> {
      const response = await fetch(`${env.INTEGRATION_BASE_URL}/integration/v1/webhooks`, { headers: { 'x-api-key': env.INTEGRATION_API_KEY! } });
      const { data } = (await response.json()) as { data: { url: string }[] };
      return data.map((endpoint) => endpoint.url).sort();
    }

    // Each sample also leaves the key's endpoints as it found them: one left on a URL nothing answers
    // would fail every delivery and hold one of the 5 places, one more per run.
    it.each(runnable.map((sample) => [`${sample.section} (${sample.name})`, sample]))('%s', async (_title, sample) => {
      const before = await endpointUrls();
      const stdout = await runSample(sample);
      if (sample === quickStart) expect(stdout).toMatch(/^ok \[/);
      expect(await endpointUrls()).toEqual(before);
    }, 40_000);
  });
});
