// Without redis-server the suites of this folder skip with one line saying how to install it,
// except under CI=true where they run, and fail.
import { createClient, type RedisClientType } from 'redis';
import { redisServerAvailable } from '../../bench/lib/redis-server.ts';

export { RedisServer } from '../../bench/lib/redis-server.ts';

/** `describe.skipIf(skipRedis)`: true only locally without redis-server (and then says so once). */
export const skipRedis = !redisServerAvailable && process.env.CI !== 'true';
if (skipRedis) console.log('redis tests skipped: redis-server not found (apt-get install -y redis-server)');

/** A connected node-redis client; its 'error' events are handled, as node-redis requires. */
export async function connectedClient(url: string): Promise<RedisClientType> {
  const client: RedisClientType = createClient({ url, socket: { reconnectStrategy: () => 50 } });
  client.on('error', () => {});
  await client.connect();
  return client;
}
