// One process of several sharing an egress budget through Redis: its tenants ask for tokens as
// fast as they are given (each "attempt" finishes at once) for a while, as interactive calls or as
// bulk batches, and it records when each was granted (wall clock, comparable between processes on
// this machine), in all and per tenant. Optionally one of its tenants meets a 429 while its
// key still has tokens: the IP is out.
// argv[2]: JSON of `BudgetProcessRun`. Prints `ready` once set up, then waits for `go <startAt>` on
// stdin (wall-clock ms at which every process starts asking, so that they ask together), and prints
// one JSON line (`BudgetProcessOutput`) at the end.
import { createClient } from 'redis';
import { createTenantBudget } from '../../../src/tenants/budget/index.ts';

export interface BudgetProcessRun {
  redisUrl: string;
  egress: { id: string; requestsPerMinute: number; burst: number };
  tenants: number;
  /** What its tenants ask for: interactive calls (`GET /health`, the default) or bulk batches (`POST /products/bulk`). */
  kind?: 'interactive' | 'bulk';
  durationMs: number;
  /** Asks again exactly when Redis said, with no jitter: a process that always asks first (nearer Redis, less loaded). */
  quick?: boolean;
  /** Ms after `startAt` at which tenant 0 meets a 429 with this Retry-After. */
  ipLimitedAt?: { afterMs: number; retryAfterMs: number };
  name: string;
}

export interface BudgetProcessOutput {
  grants: number[];
  /** When each of its tenants was granted a token (wall clock), tenant by tenant. */
  grantsPerTenant: number[][];
  limitedAt: number | null;
  warnings: string[];
}

const run = JSON.parse(process.argv[2] ?? '{}') as BudgetProcessRun;
const redis = await createClient({ url: run.redisUrl }).on('error', () => {}).connect();
const warnings: string[] = [];
const budget = createTenantBudget({
  redis,
  egress: run.egress,
  keyBudget: { requestsPerMinute: 60_000, burst: 1_000 }, // the egress is the limit under test
  logger: { warn: (message: string) => warnings.push(message) },
}, run.quick ? { random: () => 0 } : {});
const limiters = Array.from({ length: run.tenants }, (_, index) => {
  const limiter = budget.limiterFor(`${run.name}-t${index}`);
  limiter.attach!({ keyId: `${run.name}k${index}`, logger: undefined });
  return limiter;
});

console.log('ready');
const startAt = await new Promise<number>((resolve) => {
  let input = '';
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
    input += chunk;
    const go = /^go (\d+)$/m.exec(input);
    if (go) resolve(Number(go[1]));
  });
});
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
const grants: number[] = [];
const grantsPerTenant: number[][] = limiters.map(() => []);
const request = run.kind === 'bulk' ? { method: 'POST', route: '/products/bulk' } : { method: 'GET', route: '/health' };
let limitedAt: number | null = null;
const endAt = startAt + run.durationMs;
if (run.ipLimitedAt) {
  const { afterMs, retryAfterMs } = run.ipLimitedAt;
  setTimeout(() => {
    limitedAt = Date.now();
    limiters[0]!.pause(retryAfterMs);
  }, startAt + afterMs - Date.now());
}
await Promise.all(
  limiters.map(async (limiter, index) => {
    while (Date.now() < endAt) {
      const finished = await limiter.acquire(AbortSignal.timeout(Math.max(1, endAt - Date.now())), undefined, request).catch(() => 'late' as const);
      if (finished === 'late') break;
      const at = Date.now();
      grants.push(at);
      grantsPerTenant[index]!.push(at);
      finished?.();
    }
  }),
);
await budget.close();
redis.destroy();
const output: BudgetProcessOutput = { grants, grantsPerTenant, limitedAt, warnings };
console.log(JSON.stringify(output));
