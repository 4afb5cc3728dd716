// Runs the CLI as a real process (the sources bundled once per run by the global setup, or a built
// file) and puts a counting, optionally slow proxy in front of the sandbox so tests see every
// request sent.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const register = fileURLToPath(new URL('../support/register-src.mjs', import.meta.url));
const entry = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));
const stripTypes = Number(process.versions.node.split('.')[0]) < 23 ? ['--experimental-strip-types', '--no-warnings'] : [];
/** src/cli/index.ts bundled by test/support/global-setup.ts: starts several times faster than the sources. */
const bundled = inject('cliBundle');

/** Node arguments that run the CLI from its sources (bundled once per run), or `script` when given. */
export function cliArgs(args: readonly string[], script?: string): string[] {
  if (script !== undefined) return [script, ...args];
  return bundled ? [bundled, ...args] : [...stripTypes, '--import', register, entry, ...args];
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  script?: string;
  /** Called once the process has started, e.g. to interrupt it. */
  onStart?: (child: ChildProcess) => void;
}

/** Environment with only what the CLI should see: no key from the developer's shell. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' };
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}

export async function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  const child = spawn(process.execPath, cliArgs(args, options.script), { cwd: options.cwd ?? root, env: cleanEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  options.onStart?.(child);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr };
}

/** A sandbox behind a proxy that records each request's method, path and body, and can slow them down. */
export interface ProxiedSandbox {
  sandbox: Sandbox;
  /** Base URL for INTEGRATION_BASE_URL (the proxy's). */
  baseUrl: string;
  requests: Array<{ method: string; path: string; body: string }>;
  delayMs: number;
  /** While set, requests are recorded at once but answered only once it resolves. */
  hold: Promise<void> | undefined;
  /** While set, each request is answered only once what it returns for that request resolves. */
  gate: ((request: { method: string; path: string; body: string }) => Promise<void> | undefined) | undefined;
  /** While set, rewrites the service's JSON answer to a request before the CLI sees it. */
  rewrite: ((request: { method: string; path: string; body: string }, answer: string) => string) | undefined;
  /** Requests answered so far. */
  answered: number;
  close(): Promise<void>;
}

export async function startProxiedSandbox(options: SandboxOptions = {}): Promise<ProxiedSandbox> {
  const sandbox = await createSandbox({ rate: false, ...options });
  const state: ProxiedSandbox = {
    sandbox,
    baseUrl: '',
    requests: [],
    delayMs: 0,
    hold: undefined,
    gate: undefined,
    rewrite: undefined,
    answered: 0,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await sandbox.close();
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const request = { method: req.method ?? '', path: req.url ?? '', body };
      state.requests.push(request);
      const forward = async () => {
        if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
        await state.hold;
        await state.gate?.(request);
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
        const response = await sandbox.handle(new Request(`${sandbox.url}${req.url}`, { method: req.method, headers, body: body === '' ? undefined : body }));
        let answer = Buffer.from(await response.arrayBuffer());
        if (state.rewrite) answer = Buffer.from(state.rewrite(request, answer.toString()));
        const answerHeaders = Object.fromEntries(response.headers);
        delete answerHeaders['content-length'];
        res.writeHead(response.status, answerHeaders);
        res.end(answer);
        state.answered++;
      };
      forward().catch(() => res.destroy());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/integration/v1`;
  return state;
}

/** Every external_id sent in POST /products/bulk requests. */
export function sentProductIds(requests: ProxiedSandbox['requests']): string[] {
  return requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/products/bulk'))
    .flatMap((r) => (JSON.parse(r.body) as { items: Array<{ external_id: string }> }).items.map((i) => i.external_id));
}
