// Several real processes on one key, each running a bulk upsert through redisRateLimiter against
// the sandbox, whose per-key bucket is set to the same rate (600/min, burst 10: tight enough to
// finish in seconds). Times are wall-clock milliseconds recorded by each process, so they compare
// across processes on this machine. The processes are steered (bench/workers/shared-rate-client.ts):
// they start together on a `go`, and each step waits on what they report, never on time, so a
// loaded machine makes the tests slower, not wrong.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import type { SharedRateEvent, SharedRateOutput, SharedRateRun } from '../../bench/workers/shared-rate-client.ts';
import { sourceArgs } from '../support/processes.ts';
import { connectedClient, RedisServer, skipRedis } from './redis-server.ts';

const PER_MINUTE = 600;
const BURST = 10;
// A loaded machine can keep Redis from answering within the default 500 ms; falling back then is
// tested in redis-rate-limiter.test.ts, and is not what these tests look at. A stopped Redis is
// noticed when its connection drops, not by this timeout.
const COMMAND_TIMEOUT_MS = 10_000;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('../../bench/workers/shared-rate-client.ts', import.meta.url));

let server: RedisServer;
let redis: RedisClientType;
let sandbox: Sandbox;

interface Worker {
  /** Resolves with the events printed so far once `holds` is true of them; rejects if the process ends first. */
  until(holds: (events: SharedRateEvent[]) => boolean): Promise<SharedRateEvent[]>;
  tell(word: 'go' | 'finish'): void;
  output: Promise<SharedRateOutput>;
}

function startWorker(run: SharedRateRun): Worker {
  const child = spawn(process.execPath, sourceArgs(WORKER, [JSON.stringify({ ...run, steered: true } satisfies SharedRateRun)]), { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const events: SharedRateEvent[] = [];
  const lines: string[] = [];
  const checks = new Set<() => void>();
  let stderr = '';
  let closed = false;
  child.on('close', () => (closed = true));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    const parsed = JSON.parse(line) as SharedRateEvent | SharedRateOutput;
    if (!('event' in parsed)) return;
    events.push(parsed);
    for (const check of checks) check();
  });
  // An unhandled rejection would end the process non-zero: exit code 0 means there was none.
  const output = new Promise<SharedRateOutput>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(lines.at(-1)!) as SharedRateOutput) : reject(new Error(`worker exited ${code}: ${stderr.slice(-2000)}`))));
  });
  output.catch(() => {}); // reported by whichever wait or assertion reads it
  return {
    until: (holds) =>
      new Promise((resolve, reject) => {
        const ended = () => checks.delete(check) && reject(new Error(`the worker ended first: ${stderr.slice(-2000)}`));
        const check = () => {
          if (!holds(events)) return;
          checks.delete(check);
          resolve(events);
        };
        checks.add(check);
        check();
        if (closed) ended();
        else child.once('close', ended);
      }),
    tell: (word) => void child.stdin.write(`${word}\n`),
    output,
  };
}

/** `count` steered workers, started together once each is connected to Redis. */
async function startWorkers(count: number, items: number, extra: (index: number) => Partial<SharedRateRun> = () => ({})): Promise<Worker[]> {
  const workers = Array.from({ length: count }, (_, index) =>
    startWorker({
      redisUrl: server.url,
      library: 'redis',
      sandboxUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      storeId: sandbox.storeIds[0]!,
      items,
      requestsPerMinute: PER_MINUTE,
      burst: BURST,
      prefix: `p${index}`,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      ...extra(index),
    }),
  );
  await Promise.all(workers.map((worker) => worker.until((events) => events.some((e) => e.event === 'ready'))));
  for (const worker of workers) worker.tell('go');
  return workers;
}

/** Requests answered after the first event matching `from` (none if there is no such event). */
const sentAfter = (events: SharedRateEvent[], from: (event: SharedRateEvent) => boolean) => {
  const start = events.findIndex(from);
  return start < 0 ? 0 : events.slice(start + 1).filter((e) => e.event === 'sent').length;
};
/** The pause stored in Redis after the 429 this process forced. */
const forcedPause = (events: SharedRateEvent[]) => {
  const forced = events.findIndex((e) => e.event === 'sent' && e.forced === true);
  return forced < 0 ? undefined : events.slice(forced + 1).find((e) => e.event === 'paused');
};
const logged = (pattern: RegExp) => (event: SharedRateEvent) => (event.event === 'warn' || event.event === 'info') && pattern.test(event.message);

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
    const outputs = await Promise.all((await startWorkers(4, 35)).map((worker) => worker.output));
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
    // Work enough for every step below: the processes are told when to finish.
    const workers = await startWorkers(4, 1_000, (index) => ({ library: 'ioredis', ...(index === 0 ? { force429At: 4, retryAfterS: 2 } : {}) }));
    const [first, ...others] = workers as [Worker, ...Worker[]];
    // The pause the forced 429 stored in Redis: it ran there between the call leaving and Redis's
    // answer, so it ends no sooner than `askedAt + ms`.
    const pause = forcedPause(await first.until((events) => forcedPause(events) !== undefined))!;
    const pauseEnds = pause.askedAt + pause.ms;
    // The others had work all along: each is granted a token again once the pause is over.
    await Promise.all(others.map((worker) => worker.until((events) => events.some((e) => e.event === 'granted' && e.at >= pauseEnds))));
    for (const worker of workers) worker.tell('finish');
    const outputs = await Promise.all(workers.map((worker) => worker.output));
    expect(outputs[0]!.sent[4]!.status).toBe(429);
    expect(pause.ms).toBeGreaterThanOrEqual(2_000);
    for (const [index, output] of outputs.slice(1).entries()) {
      // A token asked for once Redis held the pause came only after the pause: a request sent
      // during it went out on a token asked for before (already on its way when the 429 came back).
      expect(output.grants.filter((g) => g.askedAt > pause.at && g.at < pauseEnds), `process ${index + 1}`).toEqual([]);
    }
    expect(outputs.map((output) => output.created)).toEqual(outputs.map((output) => output.offered));
  });

  it('Redis stopped mid-run: calls go on, on the fallback; restarted: the shared bucket is used again', { timeout: 60_000 }, async () => {
    const key = `integration-sdk:rate:{${sandbox.apiKey.split('_')[1]!}}`;
    // Work enough for every step below: the processes are told when to finish.
    const workers = await startWorkers(4, 1_000);
    const each = (holds: (events: SharedRateEvent[]) => boolean) => Promise.all(workers.map((worker) => worker.until(holds)));
    // Each process is using the bucket in Redis.
    await each((events) => events.filter((e) => e.event === 'sent').length >= 2);
    expect(await redis.exists(key)).toBe(1);
    await server.stop();
    // Each notices, says so once, and its calls go on, on the fallback.
    await each((events) => sentAfter(events, logged(/cannot reach Redis/)) >= 2);
    await server.restart();
    // Each is back on the bucket in Redis (which the restart emptied: the processes made it again).
    await each((events) => sentAfter(events, logged(/reaches Redis again/)) >= 1);
    await new Promise<void>((resolve) => (redis.isReady ? resolve() : redis.once('ready', resolve)));
    expect(await redis.exists(key)).toBe(1);
    for (const worker of workers) worker.tell('finish');
    const outputs = await Promise.all(workers.map((worker) => worker.output));
    expect(outputs.map((output) => output.created)).toEqual(outputs.map((output) => output.offered));
    for (const output of outputs) {
      // One warning per outage (a 429 met on the fallback warns too, from the client: not counted).
      expect(output.warnings.filter((warning) => /cannot reach Redis/.test(warning))).toHaveLength(1);
      expect(output.infos.filter((info) => /reaches Redis again/.test(info))).toHaveLength(1);
    }
  });
});
