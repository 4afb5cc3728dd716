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

/** The service's default limit is 120 requests per minute: 2 batches of 500 a second at steady state. */
const BATCHES_PER_SECOND = 2;

/**
 * Seconds left: the rate limit's floor (batches left ÷ 2/s) or the rate observed so far, whichever is
 * slower. The observed rate alone would promise the burst's speed for the whole file.
 */
export function etaSeconds(state: PushState, batchSize: number, elapsedMs: number): number {
  const left = Math.max(0, state.total - state.done);
  const byLimit = Math.ceil(left / batchSize) / BATCHES_PER_SECOND;
  const byRate = state.done > 0 ? (left * elapsedMs) / state.done / 1000 : byLimit;
  return Math.round(Math.max(byLimit, byRate));
}

export interface ProgressView {
  start(state: PushState): void;
  update(state: PushState, eta: number): void;
  stop(): void;
}

export function progressView(mode: 'tty' | 'plain' | 'json', label: string): ProgressView {
  if (mode === 'json') {
    return {
      start: (state) => process.stdout.write(`${JSON.stringify({ event: 'start', ...state })}\n`),
      update: (state, eta) => process.stdout.write(`${JSON.stringify({ event: 'progress', ...state, eta_seconds: eta })}\n`),
      stop: () => {},
    };
  }
  if (mode === 'plain') {
    return {
      start: (state) => console.log(`${label}: ${state.total} items to push`),
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
    start: (s) => bar.start(s.total, s.done, extra(s, 0)),
    update: (s, eta) => bar.update(s.done, extra(s, eta)),
    stop: () => bar.stop(),
  };
}
