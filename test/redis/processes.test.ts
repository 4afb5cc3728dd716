// Several real processes on one key, each running a long bulk upsert through redisRateLimiter
// against the sandbox, whose per-key bucket is set to the same rate (600/min, burst 10: tight
// enough to finish in seconds). Times are wall-clock milliseconds recorded by each process as its
// requests leave, so they compare across processes on this machine.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import type { SharedRateOutput, SharedRateRun } from '../../bench/workers/shared-rate-client.ts';
import { connectedClient, RedisServer, skipRedis } from './redis-server.ts';

const PER_MINUTE = 600;
const BURST = 10;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('../../bench/workers/shared-rate-client.ts', import.meta.url));

let server: RedisServer;
let redis: RedisClientType;
let sandbox: Sandbox;

function runProcess(run: SharedRateRun): Promise<SharedRateOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './test/support/register-src.mjs', WORKER, JSON.stringify(run)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    // An unhandled rejection would end the process non-zero: exit code 0 means there was none.
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as SharedRateOutput) : reject(new Error(`worker exited ${code}: ${stderr.slice(-2000)}`))));
  });
}

function runProcesses(count: number, items: number, extra: (index: number) => Partial<SharedRateRun> = () => ({})): Promise<SharedRateOutput[]> {
  return Promise.all(
    Array.from({ length: count }, (_, index) =>
      runProcess({
        redisUrl: server.url,
        library: 'redis',
        sandboxUrl: sandbox.url,
        apiKey: sandbox.apiKey,
        storeId: sandbox.storeIds[0]!,
        items,
        requestsPerMinute: PER_MINUTE,
        burst: BURST,
        prefix: `p${index}`,
        ...extra(index),
      }),
    ),
  );
}

describe.skipIf(skipRedis)('processes sharing one key through Redis', () => {
  beforeAll(async () => {
    server = await RedisServer.start();
    redis = await connectedClient(server.url);
  });
  afterAll(async () => {
    redis?.destroy();
    await server?.stop();
  });
  beforeEach(async () => {
    await sandbox?.close();
    sandbox = await createSandbox({ rate: { perKey: { capacity: BURST, refillPerSecond: PER_MINUTE / 60_000 * 1000 }, perIp: false } });
    if (redis.isReady) await redis.flushAll();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('four processes: no 429 after the first second, and together at least 95% of the allowed rate', { timeout: 40_000 }, async () => {
    const outputs = await runProcesses(4, 35);
    const sent = outputs.flatMap((output) => output.sent).sort((a, b) => a.at - b.at);
    const t0 = sent[0]!.at;
    const elapsedS = (sent.at(-1)!.at - t0) / 1000;
    expect(outputs.map((output) => output.created)).toEqual([35, 35, 35, 35]);
    expect(sent.filter((r) => r.status === 429 && r.at - t0 >= 1000)).toEqual([]);
    const allowed = BURST + (PER_MINUTE / 60) * elapsedS;
    expect(sent.length / allowed).toBeGreaterThanOrEqual(0.95);
    expect(outputs.flatMap((output) => output.warnings)).toEqual([]);
  });

  it('a 429 in one process pauses the other three until its Retry-After has passed (ioredis clients)', { timeout: 30_000 }, async () => {
    const outputs = await runProcesses(4, 15, (index) => ({ library: 'ioredis', ...(index === 0 ? { force429At: 4, retryAfterS: 2 } : {}) }));
    const forced = outputs[0]!.sent[4]!;
    expect(forced.status).toBe(429);
    // Requests already on their way when the 429 came back are allowed; after that, none for 2 s.
    const duringPause = outputs.slice(1).flatMap((output) => output.sent).filter((r) => r.at > forced.at + 100 && r.at < forced.at + 1_900);
    expect(duringPause).toEqual([]);
    const afterPause = outputs.slice(1).flatMap((output) => output.sent).filter((r) => r.at >= forced.at + 1_900);
    expect(afterPause.length).toBeGreaterThan(0);
    expect(outputs.map((output) => output.created)).toEqual([15, 15, 15, 15]);
  });

  it('Redis stopped mid-run: calls go on, on the fallback; restarted: the shared bucket is used again', { timeout: 40_000 }, async () => {
    const keyId = sandbox.apiKey.split('_')[1]!;
    const running = runProcesses(4, 25);
    // The processes take a while to start (longer on a loaded machine): stop Redis once all four are
    // connected to it (this test's own client is the fifth) and have been using it for a second.
    const connected = async () => String(await redis.sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length;
    while ((await connected()) < 5 || !(await redis.exists(`integration-sdk:rate:{${keyId}}`))) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await server.restart();
    const outputs = await running;
    expect(outputs.map((output) => output.created)).toEqual([25, 25, 25, 25]);
    for (const output of outputs) {
      // One warning per outage (a 429 met on the fallback warns too, from the client: not counted).
      expect(output.warnings.filter((warning) => /cannot reach Redis/.test(warning))).toHaveLength(1);
      expect(output.infos.filter((info) => /reaches Redis again/.test(info))).toHaveLength(1);
    }
    await new Promise<void>((resolve) => (redis.isReady ? resolve() : redis.once('ready', resolve)));
    expect(await redis.exists(`integration-sdk:rate:{${keyId}}`)).toBe(1);
  });
});
