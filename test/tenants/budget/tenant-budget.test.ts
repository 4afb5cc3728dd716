// The tenants' budget in one process, on a manual clock: who is served when (interactive calls
// before bulk batches, tenants in turn), both buckets respected, a key's 429 against the IP's, and
// the RateLimiter contract (abort, pauses charged to the call's deadline, the first-attempt refill).
import { afterEach, describe, expect, it } from 'vitest';
import type { AcquireBudget, AttemptFinished, LimitedRequest, RateLimiter } from '../../../src/transport/rate-limiter.ts';
import { PauseOutlastsDeadline } from '../../../src/transport/rate-limiter.ts';
import { createTenantBudget, type TenantBudget, type TenantBudgetOptions } from '../../../src/tenants/budget/index.ts';
import { ConfigurationError, RateLimiterUnavailableError } from '../../../src/errors/index.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { recordingBudget } from './recording-budget.ts';

const CATALOG: LimitedRequest = { method: 'POST', route: '/products/bulk' };
const STOCK: LimitedRequest = { method: 'PATCH', route: '/stock' };
const ORDER_READ: LimitedRequest = { method: 'GET', route: '/orders/{id}' };
const LOYALTY_CREDIT: LimitedRequest = { method: 'POST', route: '/loyalty/points' };

let clock: ManualClock;
let budget: TenantBudget;

afterEach(async () => {
  await budget?.close();
});

function start(options: TenantBudgetOptions = {}): TenantBudget {
  clock = new ManualClock();
  budget = createTenantBudget({ clock, ...options });
  return budget;
}

/** Lets the grants resolved so far run their `then`s. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Moves the clock in steps, letting grants settle after each. */
async function advance(ms: number, step = 50): Promise<void> {
  for (let moved = 0; moved < ms; moved += step) {
    clock.advance(Math.min(step, ms - moved));
    await flush();
  }
}

/** A tenant's limiter, as a client made with its key would have it (attach names the key). */
function tenant(id: string, keyId = `key${id}`): RateLimiter {
  const limiter = budget.limiterFor(id);
  limiter.attach!({ keyId, logger: undefined });
  return limiter;
}

interface Grant {
  who: string;
  kind: 'interactive' | 'bulk';
  at: number;
}

/** Records every grant in order; each attempt finishes at once, as an instant answer would. */
function ledger() {
  const grants: Grant[] = [];
  const ask = (limiter: RateLimiter, who: string, request: LimitedRequest, options: { signal?: AbortSignal; budget?: AcquireBudget } = {}) => {
    const granted = limiter.acquire(options.signal, options.budget, request).then((finished) => {
      grants.push({ who, kind: request === CATALOG || request === STOCK ? 'bulk' : 'interactive', at: clock.now() });
      (finished as AttemptFinished | undefined)?.();
    });
    granted.catch(() => {}); // calls still waiting when a test ends are refused by close()
    return granted;
  };
  return { grants, ask };
}

describe('interactive calls before bulk batches, tenants in turn', () => {
  it('one tenant with 1,000 queued bulk batches: each of 49 tenants asking one interactive token is served before any further batch', async () => {
    start({ keyBudget: { requestsPerMinute: 60_000, burst: 60_000 } }); // the egress (300/min) is the only limit
    const { grants, ask } = ledger();
    const pusher = tenant('pusher');
    for (let i = 0; i < 1000; i++) void ask(pusher, 'pusher', i % 2 === 0 ? CATALOG : STOCK);
    await flush();
    // The burst, less the reserve a batch may not take (one second of the rate: 5).
    expect(grants).toHaveLength(295);

    const askedAt = new Map<string, number>();
    for (let i = 0; i < 49; i++) {
      await advance(100);
      askedAt.set(`till${i}`, grants.length);
      void ask(tenant(`till${i}`), `till${i}`, i % 2 === 0 ? ORDER_READ : LOYALTY_CREDIT);
      await flush();
    }
    await advance(20_000);
    for (const [who, before] of askedAt) {
      const at = grants.findIndex((grant) => grant.who === who);
      expect(at, `${who} was served`).toBeGreaterThanOrEqual(before);
      // No batch went between the interactive call's ask and its grant; at most the 48 others ahead.
      expect(grants.slice(before, at).filter((grant) => grant.kind === 'bulk')).toEqual([]);
      expect(at - before).toBeLessThanOrEqual(48);
    }
    // The batches had what was left: the budget ran at its full rate (burst + 5/s), less the reserve.
    const elapsedS = (clock.now() - grants[0]!.at) / 1000;
    expect(grants.length).toBeGreaterThanOrEqual(300 + 5 * elapsedS - 5 - 1);
  });

  it('two tenants pushing batches are served in turn, not first come first served', async () => {
    start({ keyBudget: { requestsPerMinute: 60_000, burst: 60_000 }, egress: { requestsPerMinute: 60, burst: 1 } });
    const { grants, ask } = ledger();
    const [a, b] = [tenant('a'), tenant('b')];
    for (let i = 0; i < 10; i++) void ask(a, 'a', CATALOG);
    for (let i = 0; i < 10; i++) void ask(b, 'b', STOCK);
    await advance(25_000, 250);
    expect(grants.map((grant) => grant.who).join('')).toBe(`a${'ab'.repeat(9)}b`);
  });

  it('the tenants\' own interactive calls go ahead of their own batches too', async () => {
    start({ egress: { requestsPerMinute: 60, burst: 1 } });
    const { grants, ask } = ledger();
    const a = tenant('a');
    for (let i = 0; i < 3; i++) void ask(a, 'batch', CATALOG);
    void ask(a, 'read', ORDER_READ);
    await advance(5_000, 250);
    expect(grants.map((grant) => grant.who)).toEqual(['batch', 'read', 'batch', 'batch']);
  });
});

describe('both buckets are respected', () => {
  it('no key above its rate, the egress not above its own, and the egress used in full by tenants in turn', async () => {
    start({ keyBudget: { requestsPerMinute: 120, burst: 5 }, egress: { requestsPerMinute: 300, burst: 10 } });
    const { grants, ask } = ledger();
    // Six tenants on five keys: two of them share one key (one merchant, a test store beside it).
    const keys: Record<string, string> = { t1: 'k1', t2: 'k2', t3: 'k3', t4: 'k4', t5: 'shared', t6: 'shared' };
    for (const [who, keyId] of Object.entries(keys)) {
      const limiter = tenant(who, keyId);
      for (let i = 0; i < 200; i++) void ask(limiter, who, ORDER_READ);
    }
    await flush();
    const burst = grants.length;
    const t0 = clock.now();
    for (let step = 0; step < 600; step++) {
      await advance(100);
      const seconds = (clock.now() - t0) / 1000;
      expect(grants.length).toBeLessThanOrEqual(10 + 5 * seconds);
      for (const keyId of new Set(Object.values(keys))) {
        const onKey = grants.filter((grant) => keys[grant.who] === keyId).length;
        expect(onKey).toBeLessThanOrEqual(5 + 2 * seconds);
      }
    }
    // Five keys at 2/s each want 10/s: the egress (5/s) is the limit, and is used in full.
    expect(grants.length).toBeGreaterThanOrEqual(10 + 5 * 60 - 1);
    // The burst went to whoever asked first (nobody else was waiting yet); from then on, in turn.
    const paced = grants.slice(burst);
    const perTenant = Object.keys(keys).map((who) => paced.filter((grant) => grant.who === who).length);
    for (const count of perTenant) expect(Math.abs(count - paced.length / 6)).toBeLessThanOrEqual(1);
  });

  it('a tenant whose key is out waits alone: the others go on, and it takes no egress token while it waits', async () => {
    start({ keyBudget: { requestsPerMinute: 60, burst: 2 }, egress: { requestsPerMinute: 600, burst: 4 } });
    const { grants, ask } = ledger();
    const [slow, other] = [tenant('slow'), tenant('other')];
    for (let i = 0; i < 4; i++) void ask(slow, 'slow', ORDER_READ);
    await flush();
    expect(grants.map((grant) => grant.who)).toEqual(['slow', 'slow']);
    // The egress still holds its other two tokens: the waiting tenant took none of them.
    void ask(other, 'other', ORDER_READ);
    void ask(other, 'other', ORDER_READ);
    await flush();
    expect(grants.map((grant) => grant.who)).toEqual(['slow', 'slow', 'other', 'other']);
    await advance(1_000);
    expect(grants.map((grant) => grant.who)).toEqual(['slow', 'slow', 'other', 'other', 'slow']);
  });
});

describe("a key's 429 and the IP's 429", () => {
  it('a 429 on a key that had no token left pauses that key only; it restarts empty', async () => {
    start({ keyBudget: { requestsPerMinute: 60, burst: 3 } });
    const { grants, ask } = ledger();
    const [a, b] = [tenant('a'), tenant('b')];
    for (let i = 0; i < 3; i++) void ask(a, 'a', ORDER_READ);
    await flush();
    a.pause(2_000);
    void ask(a, 'a', ORDER_READ);
    void ask(b, 'b', ORDER_READ);
    await flush();
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'a', 'a', 'b']);
    await advance(2_950);
    expect(grants).toHaveLength(4);
    // The pause's end, then one token at 1/s from empty.
    await advance(50);
    expect(grants.at(-1)).toEqual({ who: 'a', kind: 'interactive', at: grants[0]!.at + 3_000 });
  });

  it('a 429 on a key that still had tokens says the IP is out: every tenant waits, and the egress restarts empty', async () => {
    start();
    const { grants, ask } = ledger();
    const [a, b] = [tenant('a'), tenant('b')];
    await ask(a, 'a', ORDER_READ);
    const t0 = clock.now();
    a.pause(2_000);
    void ask(b, 'b', LOYALTY_CREDIT);
    await advance(2_150);
    expect(grants.map((grant) => grant.who)).toEqual(['a']);
    // 300/min from empty: the first token 200 ms after the pause.
    await advance(50);
    expect(grants.at(-1)).toEqual({ who: 'b', kind: 'interactive', at: t0 + 2_200 });
  });

  it('every key in use paused: the IP is out, and a tenant on a fresh key waits too', async () => {
    start({ keyBudget: { requestsPerMinute: 60, burst: 1 } });
    const { grants, ask } = ledger();
    const [a, b, c] = [tenant('a'), tenant('b'), tenant('c')];
    await ask(a, 'a', ORDER_READ);
    await ask(b, 'b', ORDER_READ);
    a.pause(1_000);
    b.pause(1_000);
    void ask(c, 'c', ORDER_READ);
    await advance(1_150);
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'b']);
    await advance(100);
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'b', 'c']);
  });

  it('one key paused alone is its own 429, not the IP', async () => {
    start({ keyBudget: { requestsPerMinute: 60, burst: 1 } });
    const { grants, ask } = ledger();
    const [a, b] = [tenant('a'), tenant('b')];
    await ask(a, 'a', ORDER_READ);
    a.pause(1_000);
    await ask(b, 'b', ORDER_READ);
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'b']);
  });
});

describe('the RateLimiter contract', () => {
  it('an aborted call leaves its line at once with the reason; the others keep their turn', async () => {
    start({ egress: { requestsPerMinute: 60, burst: 1 } });
    const { grants, ask } = ledger();
    const [a, b] = [tenant('a'), tenant('b')];
    await ask(a, 'a', ORDER_READ);
    const controller = new AbortController();
    const aborted = ask(a, 'a', ORDER_READ, { signal: controller.signal });
    void ask(b, 'b', ORDER_READ);
    const reason = new Error('gave up');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    await expect(a.acquire(AbortSignal.abort(reason))).rejects.toBe(reason);
    await advance(1_000);
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'b']);
  });

  it('a 429 pause is charged to the calls it holds; one that would end past the deadline is refused with PauseOutlastsDeadline', async () => {
    start();
    const { grants, ask } = ledger();
    const [a, b] = [tenant('a'), tenant('b')];
    await ask(a, 'a', ORDER_READ);
    a.pause(2_000); // the key had tokens: the IP is out, every tenant waits
    const patient = recordingBudget(10_000);
    void ask(b, 'b', ORDER_READ, { budget: patient });
    expect(patient.spent).toBe(2_000);
    await expect(b.acquire(undefined, recordingBudget(1_500), ORDER_READ)).rejects.toBeInstanceOf(PauseOutlastsDeadline);
    // A call already waiting when the pause grows is charged what it adds, or refused then.
    const queued = recordingBudget(3_000);
    const refused = ask(b, 'b', ORDER_READ, { budget: queued });
    expect(queued.spent).toBe(2_000);
    a.pause(4_000);
    await expect(refused).rejects.toBeInstanceOf(PauseOutlastsDeadline);
    expect(patient.spent).toBe(4_000);
    await advance(4_500);
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'b']);
  });

  it('a token taken from full buckets starts their refill only when its attempt has finished', async () => {
    start({ keyBudget: { requestsPerMinute: 60_000, burst: 60_000 }, egress: { requestsPerMinute: 60, burst: 2 } });
    const a = tenant('a');
    const finished = await a.acquire(undefined, undefined, ORDER_READ);
    expect(finished).toBeTypeOf('function');
    expect(await a.acquire(undefined, undefined, ORDER_READ)).toBeUndefined();
    let third = false;
    void a.acquire(undefined, undefined, ORDER_READ).then(() => (third = true));
    await advance(5_000);
    expect(third).toBe(false);
    (finished as AttemptFinished)();
    await advance(950);
    expect(third).toBe(false);
    await advance(50);
    expect(third).toBe(true);
  });

  it('close refuses waiting and later calls with RateLimiterUnavailableError', async () => {
    start({ egress: { requestsPerMinute: 60, burst: 1 } });
    const a = tenant('a');
    await a.acquire();
    const waiting = a.acquire();
    await budget.close();
    await expect(waiting).rejects.toBeInstanceOf(RateLimiterUnavailableError);
    await expect(a.acquire()).rejects.toBeInstanceOf(RateLimiterUnavailableError);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('tenants, keys and use', () => {
  it('the same limiter for a tenant until it is released; a released tenant back on the same key does not get a fresh burst', async () => {
    start({ keyBudget: { requestsPerMinute: 60, burst: 2 } });
    const { grants, ask } = ledger();
    const a = tenant('a', 'k');
    expect(budget.limiterFor('a')).toBe(a);
    await ask(a, 'a', ORDER_READ);
    await ask(a, 'a', ORDER_READ);
    budget.release('a');
    const again = tenant('a', 'k');
    expect(again).not.toBe(a);
    void ask(again, 'again', ORDER_READ);
    await flush();
    expect(grants).toHaveLength(2);
    await advance(1_000);
    expect(grants.map((grant) => grant.who)).toEqual(['a', 'a', 'again']);
  });

  it('usage(): the egress requests of each of the last 15 minutes, oldest first', async () => {
    start();
    const a = tenant('a');
    for (let i = 0; i < 7; i++) await a.acquire();
    await advance(60_000, 1_000);
    for (let i = 0; i < 3; i++) await a.acquire();
    const usage = await budget.usage();
    expect(usage).toHaveLength(15);
    expect(usage.slice(-2).map((minute) => minute.requests)).toEqual([7, 3]);
    expect(usage.slice(0, -2).every((minute) => minute.requests === 0)).toBe(true);
    expect(Date.parse(usage.at(-1)!.minuteStartedAt) % 60_000).toBe(0);
    expect(Date.parse(usage.at(-1)!.minuteStartedAt) - Date.parse(usage.at(-2)!.minuteStartedAt)).toBe(60_000);
  });

  it.each([
    ['a zero key rate', { keyBudget: { requestsPerMinute: 0 } }],
    ['a key burst under 1', { keyBudget: { burst: 0.5 } }],
    ['an infinite egress rate', { egress: { requestsPerMinute: Infinity } }],
    ['an empty egress id', { egress: { id: '' } }],
    ['something that is no Redis client', { redis: {} }],
  ])('bad options throw ConfigurationError naming the rule: %s', (_, options) => {
    expect(() => createTenantBudget(options as TenantBudgetOptions)).toThrow(ConfigurationError);
  });
});
