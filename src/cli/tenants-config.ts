// Where the `tenants` commands and `doctor --tenants` find the registry: its store (`--tenants` or
// INTEGRATION_TENANTS: a SQLite file or a Postgres URL, which may carry a password), the encryption
// key (INTEGRATION_TENANTS_KEY, and INTEGRATION_TENANTS_PREVIOUS_KEYS while re-keying), the webhook
// URL template (`--webhook-url` or INTEGRATION_TENANTS_WEBHOOK_URL, `{tenant}` standing for the id),
// the Redis and egress budget the tenants' processes share (`--redis` or INTEGRATION_REDIS_URL,
// `--egress-id` or INTEGRATION_EGRESS_ID), and a merchant's key (INTEGRATION_API_KEY,
// --api-key-file, or a prompt; never an argument).
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import type { Tenants, TenantStore } from '../tenants/index.ts';
import { readKey, UsageError, type ConnectionOptions } from './config.ts';
import type { StoreNames } from './failure.ts';
import { connectRedis, redisUrl } from './redis-url.ts';

export const TENANTS_STORE: StoreNames = {
  database: 'The tenants database',
  store: 'the tenants store',
  option: '--tenants',
  variable: 'INTEGRATION_TENANTS',
  creates: 'tenants connect creates it',
};

export interface TenantsCommandOptions extends ConnectionOptions {
  tenants?: string;
  webhookUrl?: string;
  redis?: string;
  egressId?: string;
}

/** The store location from `--tenants` or INTEGRATION_TENANTS; `UsageError` when neither is set. */
export function tenantsLocation(option: string | undefined): string {
  const location = option ?? process.env.INTEGRATION_TENANTS;
  if (!location) throw new UsageError('No tenants store: pass --tenants <sqlite file> or set INTEGRATION_TENANTS (use the variable for a Postgres URL with a password).');
  return location;
}

/** Opens the store; a SQLite file must exist unless `create` (only `tenants connect` makes one). */
export async function openTenantStore(location: string, create = false): Promise<TenantStore> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const { postgresTenantStore } = await import('../tenants/postgres/index.ts');
    return postgresTenantStore({ connectionString: location });
  }
  if (!create && !existsSync(location)) throw new UsageError(`No tenants database at ${location}: check the path given to --tenants (tenants connect creates it).`);
  const { sqliteTenantStore } = await import('../tenants/sqlite/index.ts');
  return sqliteTenantStore({ path: location });
}

function encryptionKey(): string | { current: string; previous: string[] } {
  const current = process.env.INTEGRATION_TENANTS_KEY?.trim();
  if (!current) throw new UsageError('No encryption key: set INTEGRATION_TENANTS_KEY to the tenants\' 32-byte key in base64 (openssl rand -base64 32 makes one; keep it out of the database and its backups).');
  const previous = (process.env.INTEGRATION_TENANTS_PREVIOUS_KEYS ?? '').split(',').map((key) => key.trim()).filter((key) => key !== '');
  return previous.length === 0 ? current : { current, previous };
}

function webhookUrl(template: string | undefined): (tenantId: string) => string {
  const value = template ?? process.env.INTEGRATION_TENANTS_WEBHOOK_URL;
  if (!value) {
    return () => {
      throw new UsageError('No webhook URL: pass --webhook-url or set INTEGRATION_TENANTS_WEBHOOK_URL, e.g. https://erp.example.com/webhooks/integration/{tenant}');
    };
  }
  if (!value.includes('{tenant}')) throw new UsageError('The webhook URL must hold {tenant}, where each tenant\'s id goes, e.g. https://erp.example.com/webhooks/integration/{tenant}');
  return (tenantId) => value.replaceAll('{tenant}', tenantId);
}

/**
 * The registry the options and environment describe; its budget shared through Redis when
 * {@link redisUrl} finds one for `options.redis`.
 */
export async function openTenants(options: TenantsCommandOptions, create = false): Promise<Tenants> {
  const baseUrl = options.baseUrl ?? process.env.INTEGRATION_BASE_URL;
  if (!baseUrl) throw new UsageError('No base URL: set INTEGRATION_BASE_URL or pass --base-url <url>.');
  const key = encryptionKey();
  const url = webhookUrl(options.webhookUrl);
  const shared = redisUrl(options.redis);
  const egressId = options.egressId ?? process.env.INTEGRATION_EGRESS_ID?.trim();
  const store = await openTenantStore(tenantsLocation(options.tenants), create);
  const redis = shared === undefined ? undefined : await connectRedis(shared).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const { createTenants } = await import('../tenants/index.ts');
  const rate = process.env.INTEGRATION_RATE_LIMIT?.trim();
  const perMinute = rate && /^\d+$/.test(rate) ? Number(rate) : undefined;
  const tenants = createTenants({
    store,
    encryptionKey: key,
    baseUrl,
    webhookUrl: url,
    ...(redis ? { redis: redis.client } : {}),
    ...(egressId ? { egress: { id: egressId } } : {}),
    ...(perMinute ? { keyBudget: { requestsPerMinute: perMinute, burst: perMinute } } : {}),
  });
  if (redis) {
    // The registry does not own the client it was given: the command's does, and ends with it.
    const close = tenants.close.bind(tenants);
    tenants.close = async () => {
      await close();
      await redis.close();
    };
  }
  return tenants;
}

/** A merchant's key: `--api-key-file`, INTEGRATION_API_KEY, or typed at a prompt that does not echo it. */
export async function merchantKey(options: ConnectionOptions): Promise<string> {
  if (options.apiKeyFile !== undefined || process.env.INTEGRATION_API_KEY?.trim()) return readKey(options);
  if (!process.stdin.isTTY) throw new UsageError("No API key: set INTEGRATION_API_KEY or pass --api-key-file <path> (or run in a terminal to type it).");
  return prompt("The merchant's API key (not shown): ");
}

async function prompt(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const lines = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = lines.question(question);
    muted = true;
    const key = (await answer).trim();
    process.stderr.write('\n');
    if (!key) throw new UsageError('No key typed.');
    return key;
  } finally {
    lines.close();
  }
}
