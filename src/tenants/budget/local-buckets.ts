import type { Clock } from '../../clock.ts';
import { bothFinished, egressNeed, interactiveReserve, type Buckets, type Rates, type TakeAnswer } from './buckets.ts';
import { LocalBucket } from './local-bucket.ts';
import type { RequestKind } from './request-kind.ts';
import { UsageCounter, type MinuteUsage } from './usage-counter.ts';

/** The buckets in this process: one per key, one egress. */
export class LocalBuckets implements Buckets {
  readonly #rates: Rates;
  readonly #clock: Clock;
  readonly #keys = new Map<string, LocalBucket>();
  readonly #egress: LocalBucket;
  readonly #reserve: number;
  readonly #usage = new UsageCounter();
  /** Keys no tenant here uses any more, whose bucket is dropped once it is at rest. */
  readonly #forgotten = new Set<string>();
  /** Told when a first attempt has finished: a refill that was held may have started. */
  readonly #onRefill: () => void;

  constructor(rates: Rates, clock: Clock, onRefill: () => void) {
    this.#rates = rates;
    this.#clock = clock;
    this.#egress = new LocalBucket(rates.egress.burst, rates.egress.requestsPerMinute, clock);
    this.#reserve = interactiveReserve(rates.egress);
    this.#onRefill = onRefill;
  }

  take(key: string, kind: RequestKind): TakeAnswer {
    const keyBucket = this.#bucket(key);
    const keyPause = keyBucket.pausedFor();
    const egressPause = this.#egress.pausedFor();
    if (keyPause > 0 || egressPause > 0) return { go: false, paused: true, keyMs: keyPause, egressMs: egressPause, turnMs: 0 };
    const keyMs = keyBucket.waitFor(1);
    const egressMs = this.#egress.waitFor(egressNeed(kind, this.#reserve));
    if (keyMs > 0 || egressMs > 0) return { go: false, paused: false, keyMs, egressMs, turnMs: 0 };
    this.#usage.count(this.#clock.now());
    return { go: true, finished: bothFinished(keyBucket.take(), this.#egress.take(), this.#onRefill) };
  }

  limited(key: string, ms: number): 'key' | 'egress' {
    const keyBucket = this.#bucket(key);
    // Our bucket runs just behind the service's: a token here means the service's key had one too.
    if (keyBucket.tokens() >= 1) {
      this.#egress.pause(ms);
      return 'egress';
    }
    keyBucket.pause(ms);
    return 'key';
  }

  pauseEgress(ms: number): void {
    this.#egress.pause(ms);
  }

  forget(key: string): void {
    // A bucket still paused or refilling would come back full if made again: it stays until then.
    this.#forgotten.add(key);
    for (const forgotten of this.#forgotten) {
      const bucket = this.#keys.get(forgotten);
      if (bucket !== undefined && !bucket.isAtRest()) continue;
      this.#keys.delete(forgotten);
      this.#forgotten.delete(forgotten);
    }
  }

  usage(): Promise<MinuteUsage[]> {
    return Promise.resolve(this.#usage.report(this.#clock.now()));
  }

  #bucket(key: string): LocalBucket {
    this.#forgotten.delete(key);
    let bucket = this.#keys.get(key);
    if (bucket === undefined) {
      bucket = new LocalBucket(this.#rates.key.burst, this.#rates.key.requestsPerMinute, this.#clock);
      this.#keys.set(key, bucket);
    }
    return bucket;
  }
}
