// The tenants' budget over a real redis-server: the key's bucket is redisRateLimiter's, the egress
// is one bucket for every budget (and process) behind the same egress id, a 429 pause stored there
// reaches them all, batches leave the reserve to another process's interactive calls, and Redis
// stopped means the in-process fallback with one warning. The script runs on Redis's clock, which no
// test can fake: where time must pass, the tests wait for what they assert, never a guessed sleep.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createCluster, type RedisClientType } from 'redis';
import { Cluster } from 'ioredis';
import { ConfigurationError } from '../../../src/errors/index.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisRateLimiter } from '../../../src/redis/index.ts';
import { createTenantBudget, type TenantBudget, type TenantBudgetOptions } from '../../../src/tenants/budget/index.ts';
import { PauseOutlastsDeadline, type LimitedRequest, type RateLimiter } from '../../../src/transport/rate-limiter.ts';
import { connectedClient, RedisServer, skipRedis } from '../../redis/redis-server.ts';
import type { BudgetProcessOutput, BudgetProcessRun } from './budget-process.ts';
import { recordingBudget } from './recording-budget.ts';

const ORDER_READ: LimitedRequest = { method: 'GET', route: '/orders/{id}' };
const CATALOG: LimitedRequest = { method: 'POST', route: '/products/bulk' };
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./budget-process.ts', import.meta.url));

let server: RedisServer;
let redis: RedisClientType;
let counter = 0;
/** A fresh name per test: keys and egress ids never meet another test's buckets. */
const fresh = (what: string) => `${what}${process.pid}x${(counter += 1)}`;
const budgets: TenantBudget[] = [];

function budgetWith(options: TenantBudgetOptions): TenantBudget {
  const budget = createTenantBudget({ redis, ...options });
  budgets.push(budget);
  return budget;
}

function tenant(budget: TenantBudget, id: string, keyId: string): RateLimiter {
  const limiter = budget.limiterFor(id);
  limiter.attach!({ keyId, logger: undefined });
  return limiter;
}

/** Whether a token comes within `ms` (far less than the rates under test give one in). */
const grantedWithin = (limiter: RateLimiter, ms: number, request: LimitedRequest = ORDER_READ) =>
  limiter.acquire(AbortSignal.timeout(ms), undefined, request).then(
    (finished) => {
      finished?.();
      return true;
    },
    () => false,
  );

/** Script calls the Redis server has run so far (every take, finish and limited is one). */
async function scriptCalls(): Promise<number> {
  const stats = await redis.info('commandstats');
  return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * Starts a budget process; it says `ready` once connected and set up, and starts asking when told
 * `go <startAt>` (so that a process slow to start under load does not begin late).
 */
function startProcess(run: Omit<BudgetProcessRun, 'startAt'>): { ready: Promise<void>; go(startAt: number): void; output: Promise<BudgetProcessOutput> } {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(run)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let readyNow: () => void = () => {};
  const ready = new Promise<void>((resolve) => (readyNow = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (/^ready$/m.test(stdout)) readyNow();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const output = new Promise<BudgetProcessOutput>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as BudgetProcessOutput) : reject(new Error(`worker exited ${code}: ${stderr.slice(-2000)}`))));
  });
  return { ready, go: (startAt) => child.stdin.end(`go ${startAt}\n`), output };
}

describe.skipIf(skipRedis)("the tenants' budget on Redis", () => {
  beforeAll(async () => {
    server = await RedisServer.start();
    redis = await connectedClient(server.url);
  });
  afterEach(async () => {
    await Promise.all(budgets.splice(0).map((budget) => budget.close()));
  });
  afterAll(async () => {
    redis?.destroy();
    await server?.stop();
  });

  it('a Redis Cluster client is refused with ConfigurationError: the two buckets would live in different slots', () => {
    const ioCluster = new Cluster([{ host: '127.0.0.1', port: server.port }], { lazyConnect: true });
    const nodeCluster = createCluster({ rootNodes: [{ url: server.url }] });
    expect(() => createTenantBudget({ redis: ioCluster })).toThrow(/Redis Cluster/);
    expect(() => createTenantBudget({ redis: nodeCluster })).toThrow(ConfigurationError);
  });

  it("a tenant's key bucket is the one redisRateLimiter keeps for that key", async () => {
    const keyId = fresh('key');
    const budget = budgetWith({ egress: { id: fresh('egress') }, keyBudget: { requestsPerMinute: 30, burst: 3 } });
    const a = tenant(budget, 'a', keyId);
    for (let i = 0; i < 3; i++) expect(await grantedWithin(a, 1_000)).toBe(true);
    expect(await redis.exists(`integration-sdk:rate:{${keyId}}`)).toBe(1);
    // Another process of the same merchant on integration-sdk/redis finds the key spent (2 s per token).
    const elsewhere = redisRateLimiter({ redis, requestsPerMinute: 30, burst: 3 });
    elsewhere.attach!({ keyId, logger: undefined });
    expect(await grantedWithin(elsewhere, 300)).toBe(false);
    // And the other way round: a key that redisRateLimiter spent is spent for the budget too.
    const otherKey = fresh('key');
    const single = redisRateLimiter({ redis, requestsPerMinute: 30, burst: 2 });
    single.attach!({ keyId: otherKey, logger: undefined });
    for (let i = 0; i < 2; i++) expect(await grantedWithin(single, 1_000)).toBe(true);
    expect(await grantedWithin(tenant(budget, 'b', otherKey), 300)).toBe(false);
  });

  it('two budgets behind the same egress id share one egress bucket; another egress id is another bucket', async () => {
    const egress = { id: fresh('egress'), requestsPerMinute: 30, burst: 4 };
    const one = budgetWith({ egress });
    const two = budgetWith({ egress });
    for (let i = 0; i < 4; i++) expect(await grantedWithin(tenant(one, `a${i}`, fresh('key')), 1_000)).toBe(true);
    expect(await grantedWithin(tenant(two, 'b', fresh('key')), 500)).toBe(false);
    const elsewhere = budgetWith({ egress: { ...egress, id: fresh('egress') } });
    expect(await grantedWithin(tenant(elsewhere, 'c', fresh('key')), 1_000)).toBe(true);
  });

  it("a 429 on a key with tokens pauses the shared egress: another budget's calls wait it out, charged to their deadline", async () => {
    const egress = { id: fresh('egress') };
    const one = budgetWith({ egress });
    const two = budgetWith({ egress });
    const a = tenant(one, 'a', fresh('key'));
    expect(await grantedWithin(a, 1_000)).toBe(true);
    a.pause(1_500);
    await until(async () => Number(await redis.hGet(`integration-sdk:rate:{_egress:${egress.id}}`, 'paused_until')) > 0);
    const b = tenant(two, 'b', fresh('key'));
    await expect(b.acquire(undefined, recordingBudget(500), ORDER_READ)).rejects.toBeInstanceOf(PauseOutlastsDeadline);
    const patient = recordingBudget(10_000);
    const finished = await b.acquire(undefined, patient, ORDER_READ);
    finished?.();
    // Charged the pause left (less the little that passed before asking), plus the round trips.
    expect(patient.spent).toBeGreaterThan(1_000);
    expect(patient.spent).toBeLessThan(2_000);
  });

  it('a 429 on a key with no token left pauses that key in Redis, not the egress', async () => {
    const egress = { id: fresh('egress') };
    const keyId = fresh('key');
    const one = budgetWith({ egress, keyBudget: { requestsPerMinute: 30, burst: 1 } });
    const two = budgetWith({ egress, keyBudget: { requestsPerMinute: 30, burst: 1 } });
    const a = tenant(one, 'a', keyId);
    expect(await grantedWithin(a, 1_000)).toBe(true);
    a.pause(5_000);
    await until(async () => Number(await redis.hGet(`integration-sdk:rate:{${keyId}}`, 'paused_until')) > 0);
    expect(await redis.hGet(`integration-sdk:rate:{_egress:${egress.id}}`, 'paused_until')).toBe('0');
    // The same key in the other budget is paused (charged: refused within a short deadline); another key is not.
    await expect(tenant(two, 'same', keyId).acquire(undefined, recordingBudget(1_000), ORDER_READ)).rejects.toBeInstanceOf(PauseOutlastsDeadline);
    expect(await grantedWithin(tenant(two, 'other', fresh('key')), 1_000)).toBe(true);
  });

  it("batches leave the egress's reserve: another budget's interactive call goes at once", async () => {
    // 30/min, burst 10: the reserve is 1 token; a token comes every 2 s.
    const egress = { id: fresh('egress'), requestsPerMinute: 30, burst: 10 };
    const pushing = budgetWith({ egress });
    const till = budgetWith({ egress });
    const pusher = tenant(pushing, 'pusher', fresh('key'));
    let batches = 0;
    for (let i = 0; i < 20; i++) {
      void pusher.acquire(undefined, undefined, CATALOG).then((finished) => {
        batches += 1;
        finished?.();
      }, () => {});
    }
    await until(async () => batches === 9);
    expect(await grantedWithin(tenant(till, 'till', fresh('key')), 1_500)).toBe(true);
    expect(batches).toBe(9);
  });

  it("a bulk tenant whose own key is out holds nobody's turn: another budget's batch goes at once", async () => {
    // 6/min, burst 3: the reserve is 1, so a batch needs 2 tokens; one comes every 10 s. After A's
    // batch the egress has 2: one batch, for whoever's turn it is, and none for a tenant behind one
    // that holds its turn.
    const egress = { id: fresh('egress'), requestsPerMinute: 6, burst: 3 };
    const keyA = fresh('key');
    // A's key: one token, then one every 2 s.
    const a = tenant(budgetWith({ egress, keyBudget: { requestsPerMinute: 30, burst: 1 } }), 'a', keyA);
    const b = tenant(budgetWith({ egress }), 'b', fresh('key'));
    expect(await grantedWithin(a, 1_000, CATALOG)).toBe(true);
    const stop = new AbortController();
    const waiting = a.acquire(stop.signal, undefined, CATALOG).catch(() => 'stopped');
    // A is in the bulk line, ahead of B, told to come back when its key has a token.
    await until(async () => Number(await redis.zScore(`integration-sdk:rate:{_egress:${egress.id}}:bulk-due`, `integration-sdk:rate:{${keyA}}`)) > Date.now() + 1_000);
    expect(await grantedWithin(b, 1_000, CATALOG)).toBe(true);
    stop.abort();
    expect(await waiting).toBe('stopped');
  });

  it('a bulk tenant that stops asking holds the others only until its turn has passed by the grace', async () => {
    // 60/min, burst 3: the reserve is 1, so a batch needs 2 tokens; one comes a second.
    const egress = { id: fresh('egress'), requestsPerMinute: 60, burst: 3 };
    const keyA = fresh('key');
    const a = tenant(budgetWith({ egress }), 'a', keyA);
    const b = tenant(budgetWith({ egress }), 'b', fresh('key'));
    for (let i = 0; i < 2; i++) expect(await grantedWithin(a, 1_000, CATALOG)).toBe(true);
    const stop = new AbortController();
    const waiting = a.acquire(stop.signal, undefined, CATALOG).catch(() => 'stopped');
    // A holds its turn (it was told to wait for the egress), then its caller gives up: Redis is not told.
    await until(async () => Number(await redis.zScore(`integration-sdk:rate:{_egress:${egress.id}}:bulk-holds`, `integration-sdk:rate:{${keyA}}`)) > Date.now());
    stop.abort();
    expect(await waiting).toBe('stopped');
    // B waits behind A for a token for each (about 2 s; alone it would go in 1 s), then A's hold is
    // over: B goes.
    expect(await grantedWithin(b, 1_500, CATALOG)).toBe(false);
    expect(await grantedWithin(b, 2_000, CATALOG)).toBe(true);
  });

  it('usage(): every budget behind the egress counts into one use per minute', async () => {
    const egress = { id: fresh('egress') };
    const one = budgetWith({ egress });
    const two = budgetWith({ egress });
    for (let i = 0; i < 3; i++) expect(await grantedWithin(tenant(one, 'a', fresh('key')), 1_000)).toBe(true);
    for (let i = 0; i < 2; i++) expect(await grantedWithin(tenant(two, 'b', fresh('key')), 1_000)).toBe(true);
    const usage = await one.usage();
    expect(usage).toHaveLength(15);
    expect(usage.reduce((sum, minute) => sum + minute.requests, 0)).toBe(5);
    expect(await two.usage()).toEqual(usage);
  });

  it('two processes: together within one egress budget, and a 429 in one pauses the other', { timeout: 30_000 }, async () => {
    const egress = { id: fresh('egress'), requestsPerMinute: 600, burst: 10 };
    const processes = [
      startProcess({ redisUrl: server.url, egress, tenants: 3, durationMs: 4_000, name: 'p1', ipLimitedAt: { afterMs: 2_000, retryAfterMs: 1_000 } }),
      startProcess({ redisUrl: server.url, egress, tenants: 3, durationMs: 4_000, name: 'p2' }),
    ];
    // Both connected and set up before either starts: they ask together from the same moment.
    await Promise.all(processes.map((each) => each.ready));
    const startAt = Date.now() + 200;
    for (const each of processes) each.go(startAt);
    const [first, second] = (await Promise.all(processes.map((each) => each.output))) as [BudgetProcessOutput, BudgetProcessOutput];
    const all = [...first.grants, ...second.grants].sort((x, y) => x - y);
    const elapsedS = (all.at(-1)! - all[0]!) / 1000;
    // Each process alone could take 10 + 10/s; together they stay within one budget (less the 1 s pause).
    expect(all.length).toBeLessThanOrEqual(10 + 10 * elapsedS);
    expect(all.length).toBeGreaterThan(10 + 10 * (elapsedS - 1) * 0.8);
    expect(second.grants.length).toBeGreaterThan(10);
    const limitedAt = first.limitedAt!;
    // Nothing granted in the other process while the pause held (a grant answered before it was stored is allowed).
    expect(second.grants.filter((at) => at > limitedAt + 100 && at < limitedAt + 900)).toEqual([]);
    expect(second.grants.filter((at) => at >= limitedAt + 1_000).length).toBeGreaterThan(0);
    expect([...first.warnings, ...second.warnings]).toEqual([]);
  });

  it("four processes × two bulk tenants, one process always asking first: once the burst is spent, the tenants are served in turn across processes (each within ±25% of the mean), at the egress's full rate", { timeout: 40_000 }, async () => {
    // 1,200/min (20 a second), burst 40: a batch leaves the reserve of 20, so 20 of the burst go to
    // batches at once, to whoever asks (nobody waits for them: docs/architecture.md), then the rate,
    // about 12 batches per tenant over the next 4 s. The first process asks again the moment Redis
    // said (no jitter): first come first served, it would take most of the tokens (46/45 against
    // 3 to 6 for the others, measured without the bulk line).
    const egress = { id: fresh('egress'), requestsPerMinute: 1_200, burst: 40 };
    const reserve = 20; // one second of the rate
    const durationMs = 5_000;
    const processes = Array.from({ length: 4 }, (_, index) =>
      startProcess({ redisUrl: server.url, egress, tenants: 2, kind: 'bulk', durationMs, quick: index === 0, name: `bulk${index}x${fresh('p')}` }),
    );
    await Promise.all(processes.map((each) => each.ready));
    const callsBefore = await scriptCalls();
    const startAt = Date.now() + 200;
    for (const each of processes) each.go(startAt);
    const outputs = await Promise.all(processes.map((each) => each.output));
    const calls = (await scriptCalls()) - callsBefore;
    // The burst above the reserve is one second of the rate: from then on every tenant waits for tokens.
    const waitingFrom = startAt + 1_000;
    const perTenant = outputs.flatMap((output) => output.grantsPerTenant.map((grants) => grants.filter((at) => at >= waitingFrom).length));
    const mean = perTenant.reduce((sum, grants) => sum + grants, 0) / perTenant.length;
    expect(perTenant).toHaveLength(8);
    for (const grants of perTenant) {
      expect(grants, `grants per tenant from 1 s on ${perTenant.join('/')}`).toBeGreaterThanOrEqual(mean * 0.75);
      expect(grants, `grants per tenant from 1 s on ${perTenant.join('/')}`).toBeLessThanOrEqual(mean * 1.25);
    }
    // The turns take nothing from the rate: what batches may take over the run (the burst above the
    // reserve, then the rate), within one budget and at least 90% of it.
    const all = outputs.flatMap((output) => output.grants).sort((x, y) => x - y);
    const allowed = egress.burst - reserve + (egress.requestsPerMinute / 60_000) * (all.at(-1)! - startAt);
    expect(all.length).toBeLessThanOrEqual(allowed + 1);
    expect(all.length).toBeGreaterThanOrEqual(allowed * 0.9);
    // Told when their turn comes, the processes do not poll: about three script calls a batch.
    expect(calls).toBeLessThan(5 * all.length);
    expect(outputs.flatMap((output) => output.warnings)).toEqual([]);
  });

  it('Redis stopped: calls go on in-process at a quarter of the rates with one warning; back on Redis once it answers', { timeout: 30_000 }, async () => {
    const own = await RedisServer.start();
    const client = await connectedClient(own.url);
    try {
      const warnings: unknown[][] = [];
      const infos: unknown[][] = [];
      const logger = { warn: (...args: unknown[]) => warnings.push(args), info: (...args: unknown[]) => infos.push(args) };
      const egressId = fresh('egress');
      const budget = createTenantBudget({ redis: client, egress: { id: egressId, requestsPerMinute: 60, burst: 8 }, logger }, { probeIntervalMs: 100 });
      budgets.push(budget);
      const a = tenant(budget, 'a', fresh('key'));
      expect(await grantedWithin(a, 1_000)).toBe(true);
      await own.stop();
      // The fallback's egress: a quarter of the burst (2), then 15/min.
      expect(await grantedWithin(a, 1_000)).toBe(true);
      expect(await grantedWithin(a, 1_000)).toBe(true);
      expect(await grantedWithin(a, 500)).toBe(false);
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0]![0])).toMatch(/cannot reach Redis/);
      await own.restart();
      await until(async () => client.isReady);
      // A restarted Redis has lost the buckets: full again, so the next call is answered there.
      expect(await grantedWithin(a, 2_000)).toBe(true);
      expect(infos.map((args) => String(args[0]))).toEqual([expect.stringMatching(/reaches Redis again/)]);
      expect(await client.exists(`integration-sdk:rate:{_egress:${egressId}}`)).toBe(1);
      expect(warnings).toHaveLength(1);
    } finally {
      client.destroy();
      await own.stop();
    }
  });
});
