// The Redis the tenants' processes share (`--redis <url>` or INTEGRATION_REDIS_URL): through it
// the tenants commands draw from the same egress budget as those processes, and `doctor --tenants`
// reads the budget's use by all of them. The client is node-redis when installed, else ioredis
// (both optional peers of the package); the URL may carry a password and is never printed.
import { UsageError } from './config.ts';

export interface SharedRedis {
  /** A connected node-redis or ioredis client, as `createTenants({ redis })` takes it. */
  client: unknown;
  close(): Promise<void>;
}

/** The Redis URL from the option or INTEGRATION_REDIS_URL; `undefined` when neither is set. */
export function redisUrl(option: string | undefined): string | undefined {
  const url = option ?? process.env.INTEGRATION_REDIS_URL?.trim();
  if (url === undefined || url === '') return undefined;
  if (!/^rediss?:\/\//.test(url)) throw new UsageError('The Redis URL must start with redis:// or rediss://, e.g. redis://127.0.0.1:6379 (pass it in INTEGRATION_REDIS_URL when it holds a password).');
  return url;
}

/** Connects to `url`; a `UsageError` saying what to install or check when it cannot. */
export async function connectRedis(url: string): Promise<SharedRedis> {
  const nodeRedis = await import('redis').catch(() => undefined);
  if (nodeRedis !== undefined) {
    const client = nodeRedis.createClient({ url, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    await client.connect().catch(unreachable);
    return { client, close: () => client.close() };
  }
  const ioredis = await import('ioredis').catch(() => undefined);
  if (ioredis === undefined) throw new UsageError('--redis needs a Redis client: npm install redis (or ioredis).');
  const client = new ioredis.Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  await client.connect().catch(unreachable);
  return {
    client,
    close: async () => {
      await client.quit();
    },
  };
}

/** Either client's failure to connect, as the one sentence the command prints. */
function unreachable(error: unknown): never {
  throw new UsageError(`Could not connect to the Redis given by --redis / INTEGRATION_REDIS_URL (${(error as Error).message}).`);
}
