// How a push shows its progress: a bar on a TTY (on stderr, so stdout stays the report), one plain
// line per batch otherwise, NDJSON events with --json.

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

/** The observed rate is read over this much recent time: long enough to smooth batches, short enough to follow a change. */
const WINDOW_MS = 10_000;
/** Batches acknowledged before the observed rate counts. */
const MIN_BATCHES = 3;

/** What the client's rate limiter knows of the wait ahead (`TokenBucket.waitFor`): a 429 pause, the tokens lacking. */
export interface LimiterWait {
  /** Milliseconds until `requests` more requests could have gone. */
  waitFor(requests: number): number;
}

/**
 * The ETA of one run, from the rate limit's floor and, once a few batches are acknowledged, the
 * rate observed over the last 10 s. The floor is what the client's limiter knows (`limiter`: the
 * pause of a 429, the tokens the batches left lack at the key's rate), else `etaSeconds` on the
 * budget. The service's bucket may have been partly spent by another process: the floor then
 * promises a burst that does not come, and the average since the start still carries the fast
 * first batches; the recent rate follows what the service actually lets through. Times are passed
 * in (milliseconds), so it is tested without a clock.
 */
export class Eta {
  readonly #total: number;
  readonly #batchSize: number;
  readonly #budget: RateBudget | undefined;
  readonly #limiter: LimiterWait | undefined;
  readonly #startedAt: number;
  /** Acknowledgements: when, and how many items of this run were done by then. */
  readonly #samples: Array<{ at: number; done: number }>;
  #batches = 0;

  /** `total`: the items this run has to push (a resumed run's rest). */
  constructor(total: number, batchSize: number, budget: RateBudget | undefined, startedAt: number, limiter?: LimiterWait) {
    this.#total = total;
    this.#batchSize = batchSize;
    this.#budget = budget;
    this.#limiter = limiter;
    this.#startedAt = startedAt;
    this.#samples = [{ at: startedAt, done: 0 }];
  }

  /** A batch was acknowledged: `done` items of this run so far, at `at`. */
  record(done: number, at: number): void {
    this.#batches++;
    this.#samples.push({ at, done });
    // Keep one sample at or before the window's start, to measure from.
    while (this.#samples.length > 2 && this.#samples[1]!.at <= at - WINDOW_MS) this.#samples.shift();
  }

  get done(): number {
    return this.#samples.at(-1)!.done;
  }

  /** Items per second: over the last 10 s once a few batches are in (since the start before that). */
  rate(now: number): number {
    const last = this.#samples.at(-1)!;
    const elapsed = (now - this.#startedAt) / 1000;
    const average = elapsed > 0 ? last.done / elapsed : 0;
    if (this.#batches < MIN_BATCHES) return average;
    const from = this.#samples.findLast((s) => s.at <= now - WINDOW_MS) ?? this.#samples[0]!;
    const seconds = (now - from.at) / 1000;
    const recent = seconds > 0 ? (last.done - from.done) / seconds : 0;
    return recent > 0 ? recent : average;
  }

  /** Seconds left at `now`. */
  seconds(now: number): number {
    const done = this.done;
    const requests = Math.ceil(Math.max(0, this.#total - done) / this.#batchSize);
    const floor = this.#limiter
      ? (requests === 0 ? 0 : Math.ceil(this.#limiter.waitFor(requests) / 1000))
      : etaSeconds({ done, total: this.#total, created: 0, updated: 0, errors: 0 }, this.#batchSize, now - this.#startedAt, this.#budget);
    if (this.#batches < MIN_BATCHES) return floor;
    const rate = this.rate(now);
    const left = Math.max(0, this.#total - done);
    return Math.round(rate > 0 ? Math.max(floor, left / rate) : floor);
  }
}

/** `45s`, `1m05s`, `2h03m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** What one line of the bar shows. */
export interface ProgressFigures {
  state: PushState;
  kind: 'catalog' | 'stock';
  label: string;
  elapsedSeconds: number;
  itemsPerSecond: number;
  etaSeconds: number;
}

/** `75500` → `75.5k`, `100000` → `100k`, `1234567` → `1.23M`: never rounded up, so nothing reads as done early. */
export function shortCount(n: number): string {
  if (n < 10_000) return String(n);
  if (n < 1_000_000) return `${Math.floor(n / 100) / 10}k`;
  return `${Math.floor(n / 10_000) / 100}M`;
}

/**
 * The bar's line, fitted to `width` columns. When it does not fit, the label goes first (the user
 * typed the command), then the counts shorten (`75.5k/100k`), then parts go, least useful first:
 * the elapsed time, the bar, the rate, created / updated, the percentage. Items done / total,
 * errors and the ETA stay; at 80 columns the percentage stays too. The bar takes what room is
 * left, 8 to 30 columns. Stock has no creates, so no "created" count.
 */
export function progressLine(f: ProgressFigures, width: number): string {
  const { state } = f;
  const ratio = state.total > 0 ? Math.min(1, state.done / state.total) : 1;
  const counts = (n: (count: number) => string) => (f.kind === 'catalog' ? `created ${n(state.created)} updated ${n(state.updated)}` : `updated ${n(state.updated)}`);
  // The lowest rank is dropped first; `short` is the part once the counts shorten.
  const parts: Array<{ text: string; short?: string; rank: number; bar?: true }> = [
    { text: f.label, rank: 0 },
    { text: '', rank: 2, bar: true },
    { text: `${Math.floor(ratio * 100)}%`, rank: 5 },
    { text: `${state.done}/${state.total}`, short: `${shortCount(state.done)}/${shortCount(state.total)}`, rank: 9 },
    { text: counts(String), short: counts(shortCount), rank: 4 },
    { text: `errors ${state.errors}`, rank: 7 },
    { text: `${Math.round(f.itemsPerSecond)} items/s`, rank: 3 },
    { text: `elapsed ${duration(f.elapsedSeconds)}`, rank: 1 },
    { text: `ETA ${duration(f.etaSeconds)}`, rank: 8 },
  ];
  const render = (shown: typeof parts, barWidth: number, short: boolean) => shown
    .map((p) => (p.bar ? `[${'█'.repeat(Math.round(ratio * barWidth))}${'░'.repeat(barWidth - Math.round(ratio * barWidth))}]` : short ? (p.short ?? p.text) : p.text))
    .join(' ');
  // Two columns stay free: the terminal echoes ^C after the line, and a full line would wrap there.
  const room = Math.max(20, width - 3);
  let shown = parts;
  let short = false;
  for (;;) {
    const hasBar = shown.some((p) => p.bar);
    const fixed = render(shown.filter((p) => !p.bar), 0, short).length;
    if (hasBar && fixed + 3 + MIN_BAR <= room) return render(shown, Math.min(MAX_BAR, room - fixed - 3), short);
    if (!hasBar && fixed <= room) return render(shown, 0, short);
    const lowest = shown.reduce((a, b) => (b.rank < a.rank ? b : a));
    if (lowest.rank > 0 && !short) {
      short = true;
      continue;
    }
    if (lowest.rank >= 7) return render(shown.filter((p) => !p.bar), 0, short).slice(0, room);
    shown = shown.filter((p) => p !== lowest);
  }
}

const MIN_BAR = 8;
const MAX_BAR = 30;

export interface ProgressView {
  /** `resumeLine`: the line a resumed run continues from. */
  start(state: PushState, eta: Eta, resumeLine?: number): void;
  update(state: PushState, eta: Eta): void;
  /** A line for the user (Ctrl-C's "Stopping: …"), on a line of its own, never over the bar. */
  note(text: string): void;
  /** Finishes the bar's line, so what follows starts on a fresh one. */
  stop(): void;
}

export function progressView(mode: 'tty' | 'plain' | 'json', label: string, kind: 'catalog' | 'stock'): ProgressView {
  const figures = (s: PushState) => (kind === 'catalog' ? s : { done: s.done, total: s.total, updated: s.updated, errors: s.errors });
  const counts = (s: PushState) => (kind === 'catalog' ? `created ${s.created}, updated ${s.updated}` : `updated ${s.updated}`);
  const note = (text: string) => process.stderr.write(`${text}\n`);
  if (mode === 'json') {
    const event = (name: string, state: PushState, eta: Eta) => {
      const now = Date.now();
      return `${JSON.stringify({ event: name, ...figures(state), eta_seconds: eta.seconds(now), items_per_second: Math.round(eta.rate(now)) })}\n`;
    };
    return {
      start: (state, eta) => process.stdout.write(event('start', state, eta)),
      update: (state, eta) => process.stdout.write(event('progress', state, eta)),
      note,
      stop: () => {},
    };
  }
  if (mode === 'plain') {
    let startedAt = Date.now();
    return {
      start: (state, eta, resumeLine) => {
        startedAt = Date.now();
        console.log(`${label}: ${state.total} items to push${state.done > 0 ? ` (${state.done} acknowledged before, skipped; resuming at line ${resumeLine})` : ''}, eta ${eta.seconds(Date.now())}s`);
      },
      update: (s, eta) => {
        const now = Date.now();
        console.log(`${label}: ${s.done}/${s.total} items, ${counts(s)}, errors ${s.errors}, eta ${eta.seconds(now)}s (${Math.round(eta.rate(now))} items/s, elapsed ${duration((now - startedAt) / 1000)})`);
      },
      note,
      stop: () => {},
    };
  }
  // One line on stderr, drawn again at each batch and twice a second (the elapsed time moves between
  // batches): carriage return, the line fitted to the terminal's width, erase to its end. Written here
  // rather than by cli-progress, which restores the cursor to where the bar started when it stops,
  // so a line written meanwhile ("Stopping: …") was overwritten by the summary.
  let current: { state: PushState; eta: Eta; startedAt: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    if (!current) return;
    const now = Date.now();
    const width = process.stdout.columns || process.stderr.columns || 80;
    const line = progressLine({ state: current.state, kind, label, elapsedSeconds: (now - current.startedAt) / 1000, itemsPerSecond: current.eta.rate(now), etaSeconds: current.eta.seconds(now) }, width);
    process.stderr.write(`\r${line}\x1b[K`);
  };
  return {
    start: (state, eta, resumeLine) => {
      if (state.done > 0) note(`${label}: resuming at line ${resumeLine}: ${state.done} of ${state.total} items were acknowledged before and are skipped.`);
      current = { state: { ...state }, eta, startedAt: Date.now() };
      draw();
      timer = setInterval(draw, 500);
      timer.unref();
    },
    update: (state, eta) => {
      current = { ...current!, state: { ...state }, eta };
      draw();
    },
    note: (text) => {
      // Over the bar's line (and a ^C the terminal echoed there), then the bar again below it.
      if (current) process.stderr.write('\r\x1b[K');
      note(text);
      draw();
    },
    stop: () => {
      if (!current) return;
      clearInterval(timer);
      draw();
      process.stderr.write('\n');
      current = undefined;
    },
  };
}
