// How a push shows its progress: a bar on a TTY (cli-progress, on stderr so stdout stays the
// report), one plain line per batch otherwise, NDJSON events with --json.
import cliProgress from 'cli-progress';

/** Counters of a push so far. `total` is the number of items in the file (counted before sending). */
export interface PushState {
  done: number;
  total: number;
  created: number;
  updated: number;
  errors: number;
}

/** A request budget, in the client's `rateLimit` shape: `requestsPerMinute`, `burst` of them at once. */
export interface RateBudget {
  requestsPerMinute: number;
  burst: number;
}

/** The service's default limit: 120 requests a minute with a burst of 120 (spec 8). */
export const DEFAULT_BUDGET: RateBudget = { requestsPerMinute: 120, burst: 120 };

/**
 * Seconds left: the rate limit's floor or the rate observed so far, whichever is slower. The floor
 * counts what the burst still holds (it starts full and refills at the limit's rate): 100k products
 * = 200 requests ≈ 40 s at 120/min, the first 120 at once. The observed rate alone would promise the
 * burst's speed for the whole file. `budget` undefined (the client throttle off): observed rate only.
 */
export function etaSeconds(state: PushState, batchSize: number, elapsedMs: number, budget: RateBudget | undefined = DEFAULT_BUDGET): number {
  const left = Math.max(0, state.total - state.done);
  let byLimit = 0;
  if (budget) {
    const perSecond = budget.requestsPerMinute / 60;
    const sent = Math.ceil(state.done / batchSize);
    const available = Math.max(0, Math.min(budget.burst, budget.burst - sent + (elapsedMs / 1000) * perSecond));
    byLimit = Math.max(0, Math.ceil(left / batchSize) - Math.floor(available)) / perSecond;
  }
  const byRate = state.done > 0 ? (left * elapsedMs) / state.done / 1000 : byLimit;
  return Math.round(Math.max(byLimit, byRate));
}

export interface ProgressView {
  start(state: PushState, eta: number): void;
  update(state: PushState, eta: number): void;
  stop(): void;
}

export function progressView(mode: 'tty' | 'plain' | 'json', label: string): ProgressView {
  if (mode === 'json') {
    return {
      start: (state, eta) => process.stdout.write(`${JSON.stringify({ event: 'start', ...state, eta_seconds: eta })}\n`),
      update: (state, eta) => process.stdout.write(`${JSON.stringify({ event: 'progress', ...state, eta_seconds: eta })}\n`),
      stop: () => {},
    };
  }
  if (mode === 'plain') {
    return {
      start: (state, eta) => console.log(`${label}: ${state.total} items to push${state.done > 0 ? ` (${state.done} acknowledged before, skipped)` : ''}, eta ${eta}s`),
      update: (s, eta) => console.log(`${label}: ${s.done}/${s.total} items, created ${s.created}, updated ${s.updated}, errors ${s.errors}, eta ${eta}s`),
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% {value}/{total} | created {created} updated {updated} errors {errors} | ETA {eta_left}`,
      barsize: 24,
      stream: process.stderr,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const extra = (s: PushState, eta: number) => ({ created: s.created, updated: s.updated, errors: s.errors, eta_left: `${eta}s` });
  return {
    start: (s, eta) => bar.start(s.total, s.done, extra(s, eta)),
    update: (s, eta) => bar.update(s.done, extra(s, eta)),
    stop: () => bar.stop(),
  };
}
