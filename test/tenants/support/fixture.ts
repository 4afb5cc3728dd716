// A sandbox with many merchants behind a proxy that records every request and can fail one after
// the sandbox processed it (a 500, a reset, or no answer at all), a receiver for the deliveries,
// and registries on real SQLite files.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll } from 'vitest';
import { createTenants, type CreateTenantsOptions, type Tenants, type TenantStore } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import type { Sandbox, SandboxOptions } from 'integration-sdk/sandbox';
import { onCleanup, startReceiver, startSandbox } from '../../e2e/helpers.ts';
import { tempDir } from '../../inbox/support/temp-dir.ts';

export const dir = tempDir('tenants');
afterAll(() => dir.remove());

/** What the proxy does with a request once the sandbox has answered it. */
export type Fault = 'answer500' | 'reset' | 'hang';

export interface ProxiedRequest {
  method: string;
  path: string;
  key: string;
  status: number | 'failed';
}

export interface FaultProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Asked for each request; a fault is applied after the sandbox processed it. */
  fault: ((request: { method: string; path: string }) => Fault | undefined) | undefined;
  /** Resolves when a request is held ('hang'). */
  hung: Promise<ProxiedRequest>;
}

export async function startFaultProxy(sandbox: Sandbox): Promise<FaultProxy> {
  let resolveHung!: (request: ProxiedRequest) => void;
  const state: FaultProxy = { url: '', requests: [], fault: undefined, hung: new Promise((resolve) => (resolveHung = resolve)) };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const path = (req.url ?? '').split('?')[0]!;
      const record: ProxiedRequest = { method: req.method ?? '', path, key: String(req.headers['x-api-key'] ?? ''), status: 'failed' };
      state.requests.push(record);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const response = await sandbox.handle(new Request(`${sandbox.url}${req.url}`, { method: req.method, headers, body: body === '' ? undefined : body }));
      const answer = Buffer.from(await response.arrayBuffer());
      const fault = state.fault?.({ method: record.method, path });
      if (fault === 'reset') return void req.socket.destroy();
      if (fault === 'hang') return resolveHung(record);
      if (fault === 'answer500') {
        record.status = 500;
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'INTERNAL', message: 'injected after processing' } }));
        return;
      }
      record.status = response.status;
      const answerHeaders = Object.fromEntries(response.headers);
      delete answerHeaders['content-length'];
      res.writeHead(response.status, answerHeaders).end(answer);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onCleanup(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return state;
}

/** The bytes of a database file and its WAL and journal files. */
export function fileBytes(dbPath: string): Buffer {
  const name = dbPath.split('/').at(-1)!;
  return Buffer.concat(readdirSync(dir.path).filter((file) => file.startsWith(name)).map((file) => readFileSync(`${dir.path}/${file}`)));
}

export const newEncryptionKey = () => randomBytes(32).toString('base64');

export interface World {
  sandbox: Sandbox;
  proxy: FaultProxy;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** A registry on `store` (default: a fresh SQLite file), closed after the test. */
  tenants(overrides?: Partial<CreateTenantsOptions>): Tenants;
  dbPath: string;
  encryptionKey: string;
  webhookUrl(tenantId: string): string;
}

let files = 0;

/** A sandbox with `merchants`, its proxy, a receiver answering 200, and one database file. */
// The sandbox's own rate limits (per key, per IP) stay on, as the service's.
export async function startWorld(sandboxOptions: SandboxOptions = { merchants: [{}, {}, {}], rate: undefined }): Promise<World> {
  const sandbox = await startSandbox({ timeScale: 0.001, ...sandboxOptions });
  const proxy = await startFaultProxy(sandbox);
  const receiver = await startReceiver((_req, res) => {
    _req.resume();
    _req.on('end', () => res.writeHead(200).end());
  });
  const dbPath = `${dir.path}/tenants-${++files}.db`;
  const encryptionKey = newEncryptionKey();
  const webhookUrl = (tenantId: string) => `${receiver.url}/integration/${tenantId}`;
  return {
    sandbox,
    proxy,
    receiver,
    dbPath,
    encryptionKey,
    webhookUrl,
    tenants(overrides = {}) {
      const store: TenantStore = overrides.store ?? sqliteTenantStore({ path: dbPath });
      const tenants = createTenants({ store, encryptionKey, baseUrl: proxy.url, webhookUrl, clientOptions: { random: () => 0 }, ...overrides });
      onCleanup(() => tenants.close());
      return tenants;
    },
  };
}

/** The requests a key made, as `METHOD /path` after `/integration/v1`. */
export function requestsOf(proxy: FaultProxy, apiKey: string): string[] {
  return proxy.requests.filter((request) => request.key === apiKey).map((request) => `${request.method} ${request.path.replace('/integration/v1', '')}`);
}

/**
 * Runs `script` (a registry's operation on tenant `loja-1` of the world's file, through its proxy)
 * in a child process and SIGKILLs it once the proxy holds one of its requests; resolves with the
 * signal that ended it, the proxy's fault cleared.
 */
export async function killWhileHung(world: World, script: string, env: Record<string, string> = {}): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, ['--no-warnings', script], {
    env: {
      ...process.env,
      TENANTS_BASE_URL: world.proxy.url,
      TENANTS_DB: world.dbPath,
      TENANTS_ENCRYPTION_KEY: world.encryptionKey,
      TENANTS_HOOK: world.webhookUrl('x').replace(/\/x$/, ''),
      TENANTS_ID: 'loja-1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await world.proxy.hung;
  child.kill('SIGKILL');
  const signal = await exited;
  world.proxy.fault = undefined;
  return signal;
}
