// Without redis-server the suites of this folder skip with one line saying how to install it,
// except under CI=true where they run, and fail.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * A one-node Redis Cluster (all 16384 slots on one redis-server): enough for the cluster clients of
 * node-redis and ioredis to route by slot as they would on a real cluster.
 */
export async function startClusterNode(): Promise<{ url: string; port: number; stop: () => void }> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const config = join(mkdtempSync(join(tmpdir(), 'redis-cluster-')), 'nodes.conf');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', config, '--cluster-announce-ip', '127.0.0.1'];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`redis-server (cluster) exited with ${code} before it was ready`)));
    child.once('error', reject);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
  });
  const url = `redis://127.0.0.1:${port}`;
  const admin = await connectedClient(url);
  try {
    // ADDSLOTS, not ADDSLOTSRANGE: the latter needs Redis 7, and some distributions still ship 6.
    await admin.sendCommand(['CLUSTER', 'ADDSLOTS', ...Array.from({ length: 16384 }, (_, slot) => String(slot))]);
    while (!String(await admin.sendCommand(['CLUSTER', 'INFO'])).includes('cluster_state:ok')) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    admin.destroy();
  }
  return { url, port, stop: () => void child.kill('SIGKILL') };
}

/**
 * Freezes the redis-server at `url` with SIGSTOP (its pid as INFO reports it): connections stay
 * open, nothing is answered, as with a server stuck in a long command or a paused VM. Returns the
 * SIGCONT that thaws it; call it in a `finally`, a frozen server outlives the test otherwise.
 */
export async function freeze(url: string): Promise<() => void> {
  const admin = await connectedClient(url);
  let pid: number;
  try {
    pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
  } finally {
    admin.destroy();
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error('redis-server did not report its process_id');
  process.kill(pid, 'SIGSTOP');
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    process.kill(pid, 'SIGCONT');
  };
}
