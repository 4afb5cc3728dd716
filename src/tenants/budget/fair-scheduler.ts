import type { Clock } from '../../clock.ts';
import { chargePause, type AcquireBudget, type AttemptFinished } from '../../transport/rate-limiter.ts';
import type { Buckets, TakeAnswer } from './buckets.ts';
import { KINDS_IN_ORDER, type RequestKind } from './request-kind.ts';

/** A key used within this long counts as in use, for "every key paused": the IP is out. */
const IN_USE_MS = 60_000;

interface Waiter {
  line: TenantLine;
  kind: RequestKind;
  budget: AcquireBudget | undefined;
  signal: AbortSignal | undefined;
  resolve: (finished: AttemptFinished | undefined) => void;
  reject: (reason: unknown) => void;
  onAbort: () => void;
  /** Up to when 429 pauses have been charged to its call already. */
  chargedUntil: number;
}

/** One tenant in the scheduler: the key its bucket is named by, and its calls waiting, by kind. */
export class TenantLine {
  key: string;
  readonly waiting: Record<RequestKind, Waiter[]> = { interactive: [], bulk: [] };

  constructor(key: string) {
    this.key = key;
  }
}

/**
 * What the scheduler has learnt of a key's bucket. `readyAt` is a hint, never later than the truth
 * (the buckets are asked again then), and so is `bulkTurnAt`, when its tenant's turn among the bulk
 * tenants of every process may have come (on Redis); `pausedUntil` is a 429 pause, charged to the
 * calls it holds.
 */
interface KeyState {
  readyAt: number;
  bulkTurnAt: number;
  pausedUntil: number;
  lastGrantAt: number;
  lines: number;
}

/**
 * Serves the calls waiting for tokens: interactive calls of every tenant before any bulk batch,
 * and within each kind the tenants in turn (round robin: a tenant served goes to the back of the
 * line), never first come first served. A tenant whose own key is out of tokens is passed over
 * without holding the others, and no key token is taken before the egress has one (the buckets
 * take both or neither). One take at a time: a Redis round trip is awaited before the next. On
 * Redis, bulk tenants of every process also take turns there: a tenant whose turn has not come is
 * passed over like one whose key is out, and this process's other tenants are asked.
 */
export class FairScheduler {
  readonly #clock: Clock;
  readonly #buckets: Buckets;
  /** Per kind, the tenants with calls of that kind waiting, in turn order (a Set keeps insertion order). */
  readonly #turns: Record<RequestKind, Set<TenantLine>> = { interactive: new Set(), bulk: new Set() };
  readonly #keys = new Map<string, KeyState>();
  readonly #egressReadyAt: Record<RequestKind, number> = { interactive: 0, bulk: 0 };
  #egressPausedUntil = 0;
  #taking = false;
  #cancelTimer: (() => void) | undefined;
  #closed: Error | undefined;

  /** `buckets` is given the scheduler's `refilled`, for a refill held by a first attempt that has now finished. */
  constructor(clock: Clock, buckets: (refilled: () => void) => Buckets) {
    this.#clock = clock;
    this.#buckets = buckets(() => this.#refilled());
  }

  get buckets(): Buckets {
    return this.#buckets;
  }

  /** A tenant's line, counted against its key's state (dropped when no line uses it). */
  open(key: string): TenantLine {
    this.#keyState(key).lines += 1;
    return new TenantLine(key);
  }

  /** The tenant's client was built with another key: its line moves to that key's bucket. */
  rekey(line: TenantLine, key: string): void {
    if (line.key === key) return;
    this.#keyState(key).lines += 1;
    this.#let(line.key);
    line.key = key;
    this.#pump();
  }

  /** The tenant is dropped: calls already waiting are still served; its key's bucket may go. */
  close(line: TenantLine): void {
    this.#let(line.key);
  }

  acquire(line: TenantLine, kind: RequestKind, signal: AbortSignal | undefined, budget: AcquireBudget | undefined): Promise<AttemptFinished | undefined> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.#clock.now();
    // A pause already known (this process met the 429, or Redis said so) counts against the call's
    // deadline, and a call that would outlive it is refused at once; waiting for a token does not count.
    const pausedUntil = Math.max(this.#keyState(line.key).pausedUntil, this.#egressPausedUntil);
    try {
      chargePause(budget, pausedUntil - now);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        line, kind, budget, signal, resolve, reject,
        chargedUntil: Math.max(now, pausedUntil),
        onAbort: () => {
          this.#remove(waiter);
          reject(signal?.reason);
          this.#pump();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      line.waiting[kind].push(waiter);
      this.#turns[kind].add(line);
      // On the fallback, a new call is what asks Redis again (no timer does): not held by the fallback's waits.
      if (this.#buckets.probeDue?.()) this.#forgetWaits();
      this.#pump();
    });
  }

  /**
   * A 429 met by the tenant of `line`: its key's calls are held at once, then the buckets say
   * whether the key or the IP is out. The IP is out too when every key in use is paused.
   */
  limited(line: TenantLine, ms: number): void {
    const now = this.#clock.now();
    const key = line.key;
    this.#keyPaused(key, now + ms);
    const settle = (which: 'key' | 'egress') => {
      if (which === 'egress') {
        this.#egressPaused(now + ms);
      } else if (this.#everyKeyInUsePaused()) {
        this.#buckets.pauseEgress(ms);
        this.#egressPaused(now + ms);
      }
      this.#pump();
    };
    const which = this.#buckets.limited(key, ms);
    if (which instanceof Promise) void which.then(settle);
    else settle(which);
  }

  /** Every waiting call fails with `reason`; later ones too. */
  shutDown(reason: Error): void {
    this.#closed = reason;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    for (const waiter of this.#allWaiters()) {
      this.#remove(waiter);
      waiter.reject(reason);
    }
  }

  #pump(): void {
    if (this.#taking || this.#closed) return;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    for (;;) {
      const next = this.#next();
      if (next === undefined) {
        this.#arm();
        return;
      }
      const { line, kind } = next;
      const key = line.key;
      const answer = this.#buckets.take(key, kind, line.waiting[kind][0]!.budget);
      if (answer instanceof Promise) {
        this.#taking = true;
        void answer.then(
          (settled) => {
            this.#taking = false;
            this.#apply(line, kind, key, settled);
            this.#pump();
          },
          (error: unknown) => {
            // The buckets fall back rather than fail; should they fail, the call fails, not hangs.
            this.#taking = false;
            const waiter = line.waiting[kind][0];
            if (waiter) {
              this.#remove(waiter);
              waiter.reject(error);
            }
            this.#pump();
          },
        );
        return;
      }
      this.#apply(line, kind, key, answer);
    }
  }

  /** The first tenant in turn, interactive calls first, whose key and the egress may have a token now. */
  #next(): { line: TenantLine; kind: RequestKind } | undefined {
    const now = this.#clock.now();
    for (const kind of KINDS_IN_ORDER) {
      if (Math.max(this.#egressReadyAt[kind], this.#egressPausedUntil) > now) continue;
      for (const line of this.#turns[kind]) {
        if (this.#keyReadyAt(this.#keyState(line.key), kind) <= now) return { line, kind };
      }
    }
    return undefined;
  }

  #apply(line: TenantLine, kind: RequestKind, key: string, answer: TakeAnswer): void {
    const now = this.#clock.now();
    const state = this.#keyState(key);
    if (answer.go) {
      state.lastGrantAt = now;
      // The call asked for may have been aborted during a round trip: the tenant's next call has its token.
      const waiter = line.waiting[kind][0] ?? line.waiting.interactive[0] ?? line.waiting.bulk[0];
      if (waiter === undefined) {
        answer.finished?.();
        return;
      }
      this.#remove(waiter);
      // Round robin: the tenant just served goes to the back of its kind's line.
      if (this.#turns[waiter.kind].delete(line)) this.#turns[waiter.kind].add(line);
      waiter.resolve(answer.finished);
      return;
    }
    if (answer.paused && (answer.keyMs > 0 || answer.egressMs > 0)) {
      if (answer.keyMs > 0) this.#keyPaused(key, now + answer.keyMs);
      if (answer.egressMs > 0) this.#egressPaused(now + answer.egressMs);
      return;
    }
    if (answer.keyMs > 0) state.readyAt = now + answer.keyMs;
    // Not the tenant's turn in the bulk line: its key waits for it, the egress does not (another tenant here may be next).
    if (answer.turnMs > 0) state.bulkTurnAt = now + answer.turnMs;
    // Never ask again at once for nothing: buckets that lacked nothing would have said go.
    const egressMs = answer.egressMs > 0 || answer.keyMs > 0 || answer.turnMs > 0 ? answer.egressMs : 1;
    if (egressMs > 0) {
      this.#egressReadyAt[kind] = now + egressMs;
      // A bulk take needs more of the egress than an interactive one: it cannot go sooner.
      if (kind === 'interactive') this.#egressReadyAt.bulk = Math.max(this.#egressReadyAt.bulk, now + egressMs);
    }
  }

  /** When a take of `kind` for the key may go, as far as the scheduler knows. */
  #keyReadyAt(key: KeyState, kind: RequestKind): number {
    return Math.max(key.readyAt, key.pausedUntil, kind === 'bulk' ? key.bulkTurnAt : 0);
  }

  /** One timer, for the first moment a waiting tenant may be served. */
  #arm(): void {
    let at = Number.POSITIVE_INFINITY;
    for (const kind of KINDS_IN_ORDER) {
      const egressAt = Math.max(this.#egressReadyAt[kind], this.#egressPausedUntil);
      for (const line of this.#turns[kind]) at = Math.min(at, Math.max(egressAt, this.#keyReadyAt(this.#keyState(line.key), kind)));
    }
    // Infinity: a refill waits for a first attempt to finish, which wakes the scheduler (`#refilled`).
    if (at === Number.POSITIVE_INFINITY) return;
    this.#cancelTimer = this.#clock.setTimeout(() => {
      this.#cancelTimer = undefined;
      this.#pump();
    }, Math.max(0, Math.ceil(at - this.#clock.now())));
  }

  /** A refill held by a first attempt has started, or the buckets changed (back on Redis): ask again. */
  #refilled(): void {
    this.#forgetWaits();
    this.#pump();
  }

  /** The pacing hints are dropped (not the pauses): the buckets are asked again. */
  #forgetWaits(): void {
    this.#egressReadyAt.interactive = 0;
    this.#egressReadyAt.bulk = 0;
    for (const state of this.#keys.values()) {
      state.readyAt = 0;
      state.bulkTurnAt = 0;
    }
  }

  #keyPaused(key: string, until: number): void {
    const state = this.#keyState(key);
    state.pausedUntil = Math.max(state.pausedUntil, until);
    this.#charge([...this.#allWaiters()].filter((waiter) => waiter.line.key === key), state.pausedUntil);
  }

  #egressPaused(until: number): void {
    this.#egressPausedUntil = Math.max(this.#egressPausedUntil, until);
    this.#charge([...this.#allWaiters()], this.#egressPausedUntil);
  }

  /** Calls already waiting now wait until `until`: what that adds is charged to each, or it is refused. */
  #charge(waiters: Waiter[], until: number): void {
    const now = this.#clock.now();
    for (const waiter of waiters) {
      const extra = until - Math.max(now, waiter.chargedUntil);
      if (extra <= 0) continue;
      try {
        chargePause(waiter.budget, extra);
        waiter.chargedUntil = until;
      } catch (error) {
        this.#remove(waiter);
        waiter.reject(error);
      }
    }
  }

  #everyKeyInUsePaused(): boolean {
    const now = this.#clock.now();
    let inUse = 0;
    for (const state of this.#keys.values()) {
      if (now - state.lastGrantAt > IN_USE_MS) continue;
      if (state.pausedUntil <= now) return false;
      inUse += 1;
    }
    // One key paused alone is that key's own 429.
    return inUse >= 2;
  }

  *#allWaiters(): Generator<Waiter> {
    for (const kind of KINDS_IN_ORDER) for (const line of [...this.#turns[kind]]) yield* [...line.waiting[kind]];
  }

  #remove(waiter: Waiter): void {
    const queue = waiter.line.waiting[waiter.kind];
    const index = queue.indexOf(waiter);
    if (index === -1) return;
    queue.splice(index, 1);
    if (queue.length === 0) this.#turns[waiter.kind].delete(waiter.line);
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
  }

  #keyState(key: string): KeyState {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { readyAt: 0, bulkTurnAt: 0, pausedUntil: 0, lastGrantAt: Number.NEGATIVE_INFINITY, lines: 0 };
      this.#keys.set(key, state);
    }
    return state;
  }

  /** A line stops using `key`: with no line left, what was learnt of it is dropped, and so may its bucket be. */
  #let(key: string): void {
    const state = this.#keys.get(key);
    if (state === undefined) return;
    state.lines -= 1;
    if (state.lines > 0) return;
    this.#keys.delete(key);
    this.#buckets.forget(key);
  }
}
