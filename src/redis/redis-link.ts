import { raceAbort, type Clock } from '../clock.ts';
import { RateLimiterUnavailableError } from '../errors/index.ts';
import type { Logger } from '../transport/logger.ts';
import type { AcquireBudget } from '../transport/rate-limiter.ts';
import type { ScriptRunner } from './redis-client.ts';

/** A command timer firing this much late says this process stalled, not Redis: the timeout is re-armed once. */
const PROCESS_STALL_MS = 100;

export interface RedisLinkOptions {
  runner: ScriptRunner;
  clock: Clock;
  /** A script call not answered by then (or by the end of the caller's deadline, if sooner) counts as Redis unavailable. */
  commandTimeoutMs: number;
  /** On the fallback, Redis is asked again at most this often, or at once after the client reconnected. */
  probeIntervalMs: number;
  /** Whether an in-process bucket serves while Redis does not answer (otherwise calls fail). */
  hasFallback: boolean;
  /** The outage's warning and the recovery's info, with their fields (read when logged: a logger may come later). */
  messages: { unreachable: string; reachable: string };
  logger: () => Partial<Logger> | undefined;
  fields: () => Record<string, unknown>;
}

/**
 * What the Redis limiters share about talking to Redis: one script call within the command timeout
 * and the caller's deadline (its time charged to the caller: a slow Redis is not pacing), and the
 * state of an outage — on the fallback or not, when to ask Redis again, one warning per outage.
 */
export class RedisLink {
  readonly #options: RedisLinkOptions;
  #onFallback = false;
  #lastProbe = 0;
  /** On the fallback, one caller is asking Redis whether it answers again: the others do not wait for it. */
  #probing = false;
  /** On the fallback, the client was seen not connected: once it is again, Redis is asked at once. */
  #sawDisconnected = false;

  constructor(options: RedisLinkOptions) {
    this.#options = options;
  }

  /** Redis did not answer the last call: callers are served by the fallback (or fail) until a probe succeeds. */
  get onFallback(): boolean {
    return this.#onFallback;
  }

  /**
   * On the fallback: whether this caller is the one that asks Redis now (then it calls
   * `probeDone()` when its call has settled). Only with the client connected, and then at once if it
   * has reconnected since (or there is no fallback bucket to serve instead), otherwise at most once
   * per probe interval (Redis answering errors on a live connection). Never by a timer.
   */
  claimProbe(): boolean {
    if (!this.probeDue()) return false;
    this.#sawDisconnected = false;
    this.#lastProbe = this.#options.clock.now();
    this.#probing = true;
    return true;
  }

  /** On the fallback: whether a caller would ask Redis now (`claimProbe` without claiming it). */
  probeDue(): boolean {
    if (!this.#onFallback || this.#probing) return false;
    if (!this.#options.runner.ready()) {
      this.#sawDisconnected = true;
      return false;
    }
    if (!this.#options.hasFallback || this.#sawDisconnected) return true;
    return this.#options.clock.now() - this.#lastProbe >= this.#options.probeIntervalMs;
  }

  probeDone(): void {
    this.#probing = false;
  }

  /** A call failed: on the fallback from now on (one warning), the next probe counted from now (a frozen Redis takes the whole timeout to fail). */
  failed(error: unknown): void {
    if (!this.#onFallback) {
      this.#onFallback = true;
      this.#sawDisconnected = !this.#options.runner.ready();
      const reason = error instanceof Error ? error.name : typeof error;
      this.#options.logger()?.warn?.(this.#options.messages.unreachable, { ...this.#options.fields(), reason });
    }
    this.#lastProbe = this.#options.clock.now();
  }

  /** A call was answered: back on Redis (one info) if the fallback was serving; says whether it was. */
  answered(): boolean {
    if (!this.#onFallback) return false;
    this.#onFallback = false;
    this.#options.logger()?.info?.(this.#options.messages.reachable, this.#options.fields());
    return true;
  }

  /**
   * One script call, within the command timeout and what the caller has left of its deadline; the
   * time it takes is charged to the caller. Rejects with `RateLimiterUnavailableError` on a timeout,
   * with `signal.reason` on an abort, or with the client's error.
   */
  async ask(keys: string[], args: string[], signal?: AbortSignal, budget?: AcquireBudget): Promise<unknown> {
    const { clock, runner } = this.#options;
    const startedAt = clock.now();
    const timeoutMs = Math.max(1, Math.floor(Math.min(this.#options.commandTimeoutMs, budget?.remaining() ?? Infinity)));
    let cancel = () => {};
    const timeout = new Promise<never>((_, reject) => {
      let extended = false;
      const arm = (ms: number) => {
        const dueAt = clock.now() + ms;
        // Decided after the event loop's next I/O poll: an answer already received while the process
        // was busy wins over a timer that fired in the same turn.
        cancel = clock.setTimeout(() => setImmediate(() => {
          const now = clock.now();
          // A timer this late means this process was not running (a busy event loop, a starved CPU,
          // a start-up loading modules): its command may not even have been written. Once, if the
          // caller's deadline allows, Redis gets its time again rather than being called slow.
          if (!extended && now - dueAt > PROCESS_STALL_MS && (budget === undefined || budget.remaining() - (now - startedAt) > timeoutMs)) {
            extended = true;
            arm(timeoutMs);
            return;
          }
          reject(new RateLimiterUnavailableError(`Redis did not answer within ${timeoutMs} ms`));
        }), ms);
      };
      arm(timeoutMs);
    });
    const within = <T>(promise: Promise<T>): Promise<T> => {
      const raced = Promise.race([promise, timeout]);
      return signal ? raceAbort(raced, signal) : raced;
    };
    try {
      const connecting = runner.connecting();
      if (connecting) await within(connecting);
      if (!runner.ready()) throw new RateLimiterUnavailableError('Redis is not connected');
      const reply = runner.run(keys, args);
      reply.catch(() => {}); // settles after a timeout or an abort too: never an unhandled rejection
      return await within(reply);
    } finally {
      cancel();
      budget?.spend(clock.now() - startedAt);
    }
  }
}
