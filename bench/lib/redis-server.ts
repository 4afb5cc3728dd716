// A real redis-server on a free port, for test/redis and the shared-rate figure: stoppable and
// restartable on the same port for the fault tests.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.ts';
import { createInterface } from 'node:readline';

export const redisServerAvailable = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

export class RedisServer {
  readonly port: number;
  #child: ChildProcess | undefined;

  private constructor(port: number) {
    this.port = port;
  }

  static async start(): Promise<RedisServer> {
    if (!redisServerAvailable) throw new Error('redis-server not found (apt-get install -y redis-server); required under CI=true');
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, empty: a restarted server has lost its scripts and buckets. */
  async restart(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before it was ready`)));
      lines.on('line', (line) => {
        if (!line.includes('Ready to accept connections')) return;
        lines.close();
        child.stdout!.resume();
        resolve();
      });
    });
  }

  /** Killed, not shut down: the clients see a lost connection, as in a crash. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
