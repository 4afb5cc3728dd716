// Many merchants against the sandbox: a sandbox with merchants, a tenants registry on a SQLite
// file, and one inbox receiving every tenant's deliveries at /webhooks/integration/<tenant> over a
// real socket. Everything is closed after the test.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import type { Clock } from 'integration-sdk';
import { createInbox, type Inbox, type InboxOptions, type InboxStore } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import type { SandboxOptions } from 'integration-sdk/sandbox';
import { createTenants, type Tenants, type TenantStore } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { Credentials } from '../../../src/tenants/credentials.ts';
import { onCleanup, startSandbox } from '../../e2e/helpers.ts';
import { tempDir } from './temp-dir.ts';

const dir = tempDir('inbox-tenants');
afterAll(() => dir.remove());
let files = 0;

export interface TenantsWorld {
  sandbox: Awaited<ReturnType<typeof startSandbox>>;
  tenants: Tenants;
  tenantStore: TenantStore;
  inbox: Inbox;
  inboxStore: InboxStore;
  /** Where tenant `id`'s deliveries go. */
  webhookUrl(id: string): string;
  /** Every answer the receiver gave: path and status. */
  answers: Array<{ path: string; status: number }>;
  /** The SQLite file holding the registry and the inbox, and the registry's encryption key (for the CLI). */
  path: string;
  encryptionKey: string;
  /** Seals a secret as the registry does (what a rotation stores for a new endpoint). */
  seal(tenantId: string, endpointId: string, secret: string): string;
  /** Another registry on the same database, as another process would have. */
  otherRegistry(): Tenants;
  /** Answers requests in its own way (a receiver that is down for one tenant), handing the rest to the inbox. */
  intercept(answer: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined): void;
}

export async function tenantsWorld(
  options: { merchants?: number; sandbox?: SandboxOptions; inbox?: Partial<InboxOptions>; inboxStore?: InboxStore; tenantStore?: (store: TenantStore) => TenantStore; clock?: Clock; fetch?: typeof fetch } = {},
): Promise<TenantsWorld> {
  const sandbox = await startSandbox({ timeScale: 0.001, merchants: Array.from({ length: options.merchants ?? 3 }, () => ({})), ...options.sandbox });
  const answers: TenantsWorld['answers'] = [];
  let listener: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  let intercept: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  const server = createServer((req, res) => {
    res.on('finish', () => answers.push({ path: req.url ?? '', status: res.statusCode }));
    if (intercept?.(req, res)) return;
    listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/integration`;
  const webhookUrl = (id: string) => `${base}/${id}`;
  const path = `${dir.path}/world-${++files}.db`;
  const real = sqliteTenantStore({ path });
  const tenantStore = options.tenantStore ? options.tenantStore(real) : real;
  const encryptionKey = randomBytes(32).toString('base64');
  const tenants = createTenants({ store: tenantStore, encryptionKey, baseUrl: sandbox.url, webhookUrl, clientOptions: { random: () => 0, ...(options.fetch && { fetch: options.fetch }) } });
  const inboxStore = options.inboxStore ?? sqliteStore({ path });
  const inbox = createInbox({ tenants, store: inboxStore, ...(options.clock && { clock: options.clock }), ...options.inbox });
  onCleanup(async () => {
    await inbox.close();
    await tenants.close();
  });
  listener = inbox.handler.node;
  const credentials = new Credentials(encryptionKey, real);
  return {
    sandbox,
    tenants,
    tenantStore,
    inbox,
    inboxStore,
    webhookUrl,
    answers,
    path,
    encryptionKey,
    seal: (tenantId, endpointId, secret) => credentials.sealSecret(tenantId, endpointId, secret),
    intercept(answer) {
      intercept = answer;
    },
    otherRegistry() {
      const other = createTenants({ store: sqliteTenantStore({ path }), encryptionKey, baseUrl: sandbox.url, webhookUrl, clientOptions: { random: () => 0, ...(options.fetch && { fetch: options.fetch }) } });
      onCleanup(() => other.close());
      return other;
    },
  };
}
