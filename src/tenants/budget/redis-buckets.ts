import type { Clock } from '../../clock.ts';
import { limitedOf, pairAnswerOf, usageOf } from '../../redis/bucket-script.ts';
import type { ScriptRunner } from '../../redis/redis-client.ts';
import { RedisLink } from '../../redis/redis-link.ts';
import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_JITTER_MS, STALE_ATTEMPT_MS } from '../../redis/redis-rate-limiter.ts';
import type { Logger } from '../../transport/logger.ts';
import type { AcquireBudget, AttemptFinished } from '../../transport/rate-limiter.ts';
import { interactiveReserve, type Buckets, type Rates, type TakeAnswer } from './buckets.ts';
import { LocalBuckets } from './local-buckets.ts';
import type { RequestKind } from './request-kind.ts';
import { USAGE_KEEP_MS, usageReport, type MinuteUsage } from './usage-counter.ts';

/** `redisRateLimiter`'s default prefix: a key's bucket here is the one it uses for that key. */
const PREFIX = 'integration-sdk:rate';

/**
 * How long a bulk tenant that was told to wait keeps its turn against those behind it after it was
 * due to ask again: the jitter added to its wait (up to `MAX_JITTER_MS`), a round trip and a busy
 * event loop. A tenant that does not come back within it (its caller gave up, its process stalled)
 * holds nobody up longer, and keeps its place for when it does.
 */
const BULK_TURN_GRACE_MS = 5 * MAX_JITTER_MS;
/** A bulk tenant that has not asked for this long past when it was due is forgotten by the line. */
const BULK_LINE_FORGET_MS = 10_000;

/** Time, randomness and patience, injectable so that tests need no real sleeps (as `RedisRateLimiterSeams`). */
export interface RedisBucketSeams {
  clock: Clock;
  random: () => number;
  commandTimeoutMs?: number;
  probeIntervalMs?: number;
}

/**
 * The buckets in Redis, shared by every process behind the same egress id: a key's bucket is
 * `integration-sdk:rate:{<key_id>}` (the very bucket `redisRateLimiter` keeps for that key), the
 * egress `integration-sdk:rate:{_egress:<id>}` (`_` is never in a key id), and both tokens are taken
 * by one script call. While Redis does not answer: in-process buckets at a quarter of the rates
 * (other processes may be doing the same), one warning, and Redis again once it answers.
 */
export class RedisBuckets implements Buckets {
  readonly #link: RedisLink;
  readonly #fallback: LocalBuckets;
  readonly #random: () => number;
  readonly #egressKey: string;
  readonly #usageKey: string;
  /** The egress's bulk line: places, when each tenant is due to ask again, until when each holds its turn. */
  readonly #lineKeys: [string, string, string];
  readonly #keyArgs: [string, string];
  readonly #egressArgs: [string, string];
  readonly #reserve: number;

  /** Back on Redis: the waits the fallback answered are no guide to Redis's buckets. */
  readonly #switched: () => void;

  constructor(runner: ScriptRunner, rates: Rates, egressId: string, logger: () => Partial<Logger> | undefined, seams: RedisBucketSeams, refilled: () => void) {
    this.#random = seams.random;
    this.#switched = refilled;
    this.#egressKey = `${PREFIX}:{_egress:${egressId}}`;
    this.#usageKey = `${PREFIX}:{_egress:${egressId}}:usage`;
    this.#lineKeys = ['places', 'due', 'holds'].map((part) => `${PREFIX}:{_egress:${egressId}}:bulk-${part}`) as [string, string, string];
    this.#keyArgs = [String(rates.key.burst), String(rates.key.requestsPerMinute / 60_000)];
    this.#egressArgs = [String(rates.egress.burst), String(rates.egress.requestsPerMinute / 60_000)];
    this.#reserve = interactiveReserve(rates.egress);
    const quarter = (rate: Rates['key']) => ({ requestsPerMinute: rate.requestsPerMinute / 4, burst: Math.max(1, Math.floor(rate.burst / 4)) });
    this.#fallback = new LocalBuckets({ key: quarter(rates.key), egress: quarter(rates.egress) }, seams.clock, refilled);
    this.#link = new RedisLink({
      runner,
      clock: seams.clock,
      commandTimeoutMs: seams.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      probeIntervalMs: seams.probeIntervalMs ?? 1000,
      hasFallback: true,
      messages: {
        unreachable: `integration-sdk: the tenants' budget cannot reach Redis; using in-process buckets at a quarter of the rates (egress ${rates.egress.requestsPerMinute / 4} requests/min) until it answers again`,
        reachable: "integration-sdk: the tenants' budget reaches Redis again",
      },
      logger,
      fields: () => ({ egress: egressId }),
    });
  }

  take(key: string, kind: RequestKind, budget: AcquireBudget | undefined): TakeAnswer | Promise<TakeAnswer> {
    // On the fallback, Redis is asked only when a probe is due; the other takes are served here at once.
    const onFallback = this.#link.onFallback;
    const probing = onFallback && this.#link.claimProbe();
    if (onFallback && !probing) return this.#fallback.take(key, kind);
    return this.#takeFromRedis(key, kind, budget).finally(() => {
      if (probing) this.#link.probeDone();
    });
  }

  limited(key: string, ms: number): 'key' | 'egress' | Promise<'key' | 'egress'> {
    const local = this.#fallback.limited(key, ms);
    if (this.#link.onFallback) return local;
    const args = ['limited', ...this.#keyArgs, String(Math.ceil(ms)), String(STALE_ATTEMPT_MS), ...this.#egressArgs];
    // An answer the script cannot have given counts as Redis failing: never an unhandled rejection.
    return this.#link.ask([this.#keyName(key), this.#egressKey], args).then(limitedOf).catch((error: unknown) => {
      this.#link.failed(error);
      return local;
    });
  }

  pauseEgress(ms: number): void {
    this.#fallback.pauseEgress(ms);
    if (this.#link.onFallback) return;
    this.#link.ask([this.#egressKey], ['pause', ...this.#egressArgs, String(Math.ceil(ms)), String(STALE_ATTEMPT_MS)]).catch((error: unknown) => this.#link.failed(error));
  }

  forget(key: string): void {
    this.#fallback.forget(key);
  }

  probeDue(): boolean {
    return this.#link.probeDue();
  }

  /** The egress's use as Redis counted it for every process; this process's own on the fallback while Redis does not answer. */
  async usage(): Promise<MinuteUsage[]> {
    try {
      const { now, minutes } = usageOf(await this.#link.ask([this.#usageKey], ['usage']));
      return usageReport(now, minutes);
    } catch {
      return this.#fallback.usage();
    }
  }

  async #takeFromRedis(key: string, kind: RequestKind, budget: AcquireBudget | undefined): Promise<TakeAnswer> {
    const reserve = kind === 'bulk' ? this.#reserve : 0;
    let reply: unknown;
    try {
      reply = await this.#link.ask(
        [this.#keyName(key), this.#egressKey, this.#usageKey, ...this.#lineKeys],
        ['take', ...this.#keyArgs, '0', String(STALE_ATTEMPT_MS), ...this.#egressArgs, '0', String(reserve), String(USAGE_KEEP_MS), kind, String(BULK_TURN_GRACE_MS), String(BULK_LINE_FORGET_MS)],
        undefined,
        budget,
      );
    } catch (error) {
      this.#link.failed(error);
      return this.#fallback.take(key, kind);
    }
    let answer;
    try {
      answer = pairAnswerOf(reply);
    } catch (error) {
      this.#link.failed(error);
      return this.#fallback.take(key, kind);
    }
    if (this.#link.answered()) this.#switched();
    if (answer.go) return { go: true, finished: this.#finisher(key, answer.keyAttemptId, answer.egressAttemptId) };
    // Processes told to wait for the same token would all ask at the same millisecond: a little jitter.
    const jitter = (ms: number) => (ms > 0 ? ms + this.#random() * Math.min(MAX_JITTER_MS, ms / 4) : 0);
    return { go: false, paused: answer.paused, keyMs: jitter(answer.keyMs), egressMs: jitter(answer.egressMs), turnMs: jitter(answer.turnMs) };
  }

  /** Tells both buckets that the attempt of a token taken from a full one has finished. */
  #finisher(key: string, keyAttemptId: number, egressAttemptId: number): AttemptFinished | undefined {
    if (keyAttemptId === 0 && egressAttemptId === 0) return undefined;
    let called = false;
    return () => {
      if (called) return;
      called = true;
      // If this is lost, the script counts the attempt finished after STALE_ATTEMPT_MS.
      const args = ['finish', ...this.#keyArgs, String(keyAttemptId), String(STALE_ATTEMPT_MS), ...this.#egressArgs, String(egressAttemptId)];
      this.#link.ask([this.#keyName(key), this.#egressKey], args).catch(() => {});
    };
  }

  #keyName(key: string): string {
    return `${PREFIX}:{${key}}`;
  }
}
