// `integration-sdk dashboard`: the operator's dashboard over an inbox store, on 127.0.0.1 by
// default with a random one-time token in the printed URL (as notebook servers do). Listening on
// another address needs a token the operator chose (--token-file or DASHBOARD_TOKEN): a random one
// printed to a terminal is fine on loopback, not for a network.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createDashboard, type DashboardSync } from '../dashboard/index.ts';
import { createInbox } from '../inbox/index.ts';
import type { IntegrationClient } from '../client.ts';
import { clientFrom, UsageError, type ConnectionOptions } from './config.ts';
import { openStore, storeLocation } from './inbox-store.ts';
import { openTenants } from './tenants-config.ts';

/** Options of `integration-sdk dashboard`. */
export interface DashboardCommandOptions extends ConnectionOptions {
  store?: string;
  state?: string;
  /** The tenants store (a SQLite file or a Postgres URL): the Tenants page and a tenant filter. */
  tenants?: string;
  port: number;
  bind?: string;
  tokenFile?: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

function chosenToken(options: DashboardCommandOptions): string | undefined {
  if (options.tokenFile !== undefined) {
    let token: string;
    try {
      token = readFileSync(options.tokenFile, 'utf8').trim();
    } catch {
      throw new UsageError(`Cannot read the token file ${options.tokenFile}: check the path and its permissions.`);
    }
    if (token.length < 16) throw new UsageError(`The token in ${options.tokenFile} is shorter than 16 characters: use a long random one.`);
    return token;
  }
  const fromEnv = process.env.DASHBOARD_TOKEN?.trim();
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < 16) throw new UsageError('DASHBOARD_TOKEN is shorter than 16 characters: use a long random one.');
    return fromEnv;
  }
  return undefined;
}

/** The sync of `--state` for the Sync panel; createSync needs the client, for the key's scope. */
async function openSync(location: string, client: IntegrationClient | undefined): Promise<DashboardSync> {
  if (!client) throw new UsageError('--state needs the service key (INTEGRATION_API_KEY and INTEGRATION_BASE_URL): the sync state is kept per key scope.');
  const [{ createSync }, { openSyncState }] = await Promise.all([import('../sync/index.ts'), import('./sync-commands.ts')]);
  return createSync({ client, state: await openSyncState(location) });
}

/** Serves the dashboard until SIGINT or SIGTERM. */
export async function runDashboard(options: DashboardCommandOptions): Promise<void> {
  const host = options.bind ?? '127.0.0.1';
  const chosen = chosenToken(options);
  if (!LOOPBACK.has(host) && chosen === undefined) {
    throw new UsageError(`--bind ${host} exposes the dashboard beyond this machine: give it a token of your own with --token-file <path> or DASHBOARD_TOKEN.`);
  }
  const tenantsLocation = options.tenants ?? process.env.INTEGRATION_TENANTS;
  const tenants = tenantsLocation === undefined ? undefined : await openTenants({ ...options, tenants: tenantsLocation });
  const store = await openStore(storeLocation(options.store));
  // The dashboard reads and retries through the store; it receives no deliveries, so the inbox's
  // webhook secret is never used here (nor, with tenants, their secrets).
  const inbox = tenants ? createInbox({ tenants, store }) : createInbox({ secret: `whsec_unused_${randomBytes(16).toString('hex')}`, store });
  const hasKey = options.apiKeyFile !== undefined || Boolean(process.env.INTEGRATION_API_KEY);
  const client = hasKey ? clientFrom(options) : undefined;
  const sync = options.state === undefined ? undefined : await openSync(options.state, client);
  const token = chosen ?? randomBytes(24).toString('base64url');
  // The random token is printed: its link signs in once, so that the link in scrollback or a log
  // lets nobody else in. A token of the operator's own signs in as often as asked.
  const dashboard = createDashboard({ inbox, client, sync, tenants, auth: { token, signInOnce: chosen === undefined } });
  const server = createServer(dashboard.node);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new UsageError(error.code === 'EADDRINUSE' ? `Port ${options.port} on ${host} is in use: pick another with --port.` : `Cannot listen on ${host}:${options.port} (${error.code ?? error.message}).`)),
    );
    server.listen(options.port, host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  if (chosen === undefined) {
    console.log(`Dashboard on ${url}\nOpen it with this one-time link (it signs you in once and leaves the address bar):\n  ${url}?token=${token}`);
  } else {
    console.log(`Dashboard on ${url}\nSign in once with ${url}?token=<your token> (from ${options.tokenFile ?? 'DASHBOARD_TOKEN'}).`);
  }
  if (tenants) console.log(`Tenants: on (${tenantsLocation!.startsWith('postgres') ? 'the Postgres tenants store' : tenantsLocation}): the Tenants page, and each tenant's pages with its own endpoints.`);
  else console.log(client ? 'Service panel: on (INTEGRATION_API_KEY).' : 'Service panel: off (set INTEGRATION_API_KEY and INTEGRATION_BASE_URL to see the endpoints and missed deliveries).');
  console.log('Ctrl-C to stop.');
  const stop = (signal: string) => {
    console.log(`\n${signal}: stopping the dashboard.`);
    server.closeAllConnections();
    server.close();
    void Promise.all([inbox.close(), tenants?.close(), (sync as { close?: () => Promise<void> } | undefined)?.close?.()]).then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
