// A real redis-server for the tests, on a free port, stopped (really) when asked. Without
// redis-server on PATH the Redis tests skip with one line saying how to install it; under CI=true
// they fail instead, because CI installs it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createClient } from 'redis';

export const hasRedisServer = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

export function redisSkipReason(): string | undefined {
  if (hasRedisServer) return undefined;
  if (process.env.CI === 'true') throw new Error('redis-server is not installed, and CI=true requires the Redis tests to run: apt-get install -y redis-server');
  console.warn('Skipping the Redis tests: redis-server is not installed (apt-get install -y redis-server)');
  return 'redis-server is not installed';
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  port: number;
  url: string;
  /** SIGKILL: the server disappears as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisServer(port?: number): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitUntilAnswers(chosen);
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  return { port: chosen, url: `redis://127.0.0.1:${chosen}`, kill, restart: launch, stop: kill };
}

async function waitUntilAnswers(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } }).on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      await client.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`redis-server did not start on port ${port}`);
}
