// One sync run, its methods in the order a run happens: the scope from health() and the lease; the
// input judged window by window; each batch of changed items marked in flight in the state, then
// sent through the client's bulk write; each answer recorded as it arrives; the end recorded,
// whatever it was.
import { randomUUID } from 'node:crypto';
import type { IntegrationClient } from '../client.ts';
import type { Clock } from '../clock.ts';
import { currentCall, traceCall } from '../diagnostics.ts';
import { ConfigurationError } from '../errors/index.ts';
import type { BulkInput, ItemResultShape } from '../resources/bulk/types.ts';
import { checkInput, FirstOccurrences } from '../resources/bulk/windowing.ts';
import { readAnswer, type Settled } from './answers.ts';
import { Classifier, type ChangedItem } from './classify.ts';
import type { SyncKindAdapter } from './kinds.ts';
import { keepLease, takeLease, type Lease } from './run-lease.ts';
import { describe, spanCounts, storedCounts, type RunOutcome } from './run-outcome.ts';
import { RunTally } from './run-tally.ts';
import { baseUrlOf, scopeOf } from './scope.ts';
import type { RunErrorItem, SyncState } from './state.ts';
import type { SyncRunOptions } from './types.ts';

export type { RunOutcome } from './run-outcome.ts';

export interface RunContext {
  client: IntegrationClient;
  state: SyncState;
  clock: Clock;
  maxAgeMs: number;
}

function checkRunOptions(options: SyncRunOptions): void {
  for (const flag of ['full', 'dryRun'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') throw new ConfigurationError(`${flag} must be a boolean.`);
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw new ConfigurationError('onProgress must be a function.');
  const { concurrency } = options;
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) throw new ConfigurationError('concurrency must be an integer >= 1.');
  const { batchSize } = options;
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 500)) throw new ConfigurationError('batchSize must be an integer from 1 to 500.');
}

/** Runs one sync of `adapter.kind`; traced as `sync.catalog` / `sync.stock` with its counts. */
export function runSync<Result extends ItemResultShape>(
  context: RunContext,
  adapter: SyncKindAdapter<Result>,
  items: BulkInput<unknown>,
  options: SyncRunOptions = {},
): Promise<RunOutcome<Result>> {
  checkRunOptions(options);
  checkInput(items);
  const run = new SyncRun(context, adapter, options, Array.isArray(items) ? items.length : undefined);
  return traceCall(`sync.${adapter.kind}`, () => run.execute(items), (outcome) => spanCounts(outcome, adapter.kind === 'catalog'));
}

class SyncRun<Result extends ItemResultShape> {
  readonly #context: RunContext;
  readonly #adapter: SyncKindAdapter<Result>;
  readonly #options: SyncRunOptions;
  readonly #runId = randomUUID();
  readonly #dryRun: boolean;
  readonly #startedAt: number;
  /** Aborted when the run loses its lease; the caller's signal joins it. */
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  /** The service, merchant and key stores the state is kept for (from health()). */
  #scope = '';
  #lease: Lease | undefined;
  #seq = 0;
  #stopRenewing = () => {};
  #classifier: Classifier<Result> | undefined;
  readonly #tally: RunTally<Result>;
  readonly #rejectionsToStore: RunErrorItem[] = [];
  #batches = 0;
  readonly #inFlight: Promise<void>[] = [];
  /** Answers are recorded one at a time, in the order they arrive. */
  #recording: Promise<void> = Promise.resolve();
  #recordFailure: { error: unknown } | undefined;
  #complete = false;

  constructor(context: RunContext, adapter: SyncKindAdapter<Result>, options: SyncRunOptions, itemsTotal: number | undefined) {
    this.#context = context;
    this.#adapter = adapter;
    this.#options = options;
    this.#dryRun = options.dryRun === true;
    this.#startedAt = context.clock.now();
    this.#signal = options.signal ? AbortSignal.any([options.signal, this.#stop.signal]) : this.#stop.signal;
    this.#tally = new RunTally({ catalog: adapter.kind === 'catalog', dryRun: this.#dryRun, itemsTotal });
  }

  async execute(items: BulkInput<unknown>): Promise<RunOutcome<Result>> {
    await this.#begin();
    try {
      this.#classifier = this.#openInput(items);
      await this.#sendChanged();
      await this.#settleAll();
      return await this.#finish();
    } catch (error) {
      throw await this.#fail(error);
    } finally {
      await this.#end();
    }
  }

  /** The scope (one health() call), and unless a dry run, the lease and the run's record. */
  async #begin(): Promise<void> {
    const { client, state, clock } = this.#context;
    const { timeoutMs, totalTimeoutMs, maxRetries } = this.#options;
    const health = await client.health({ signal: this.#signal, timeoutMs, totalTimeoutMs, maxRetries });
    const baseUrl = baseUrlOf(client);
    const scope = scopeOf(baseUrl, health);
    this.#scope = scope;
    if (this.#dryRun) return;
    const lease: Lease = { scope, kind: this.#adapter.kind, runId: this.#runId };
    await takeLease(state, lease, { startedAt: this.#startedAt, now: this.#startedAt });
    try {
      this.#seq = await state.startRun({ runId: this.#runId, scope, kind: lease.kind, baseUrl, merchantId: health.merchant_id, full: this.#options.full === true, startedAt: this.#startedAt });
    } catch (error) {
      await state.releaseLease(lease).catch(() => {});
      throw error;
    }
    this.#lease = lease;
    this.#stopRenewing = keepLease(state, clock, lease, this.#stop);
  }

  #openInput(items: BulkInput<unknown>): Classifier<Result> {
    const { kind, rules, storeIdsOf, pairsOf } = this.#adapter;
    const { full = false } = this.#options;
    return new Classifier(items, {
      kind,
      rules,
      storeIdsOf,
      pairsOf,
      state: this.#context.state,
      scope: this.#scope,
      resend: { full, maxAgeMs: this.#context.maxAgeMs, now: this.#startedAt },
      repeats: this.#dryRun ? { kind: 'memory', seen: new FirstOccurrences() } : { kind: 'state', seq: this.#seq },
      signal: this.#signal,
      onRejected: (result) => {
        const kept = this.#tally.rejected(result);
        if (kept) this.#rejectionsToStore.push(kept);
      },
      onWindow: () => this.#report(),
    });
  }

  /** Takes the changed items batch by batch; each is marked in flight, then sent (`concurrency` at once). */
  async #sendChanged(): Promise<void> {
    const classifier = this.#classifier!;
    const { batchSize = 500, concurrency = 1 } = this.#options;
    for (;;) {
      this.#throwIfRecordFailed();
      const batch = await classifier.take(batchSize);
      await this.#storeRejections();
      if (batch.length === 0) return;
      this.#tally.sent += batch.length;
      if (this.#dryRun) continue;
      // Marked while the batch before it is still in flight, so the write costs no time of its own; a
      // run that dies before sending it only sends these items again.
      await this.#markInFlight(batch);
      if (this.#inFlight.length >= concurrency) await this.#inFlight.shift();
      this.#throwIfRecordFailed();
      this.#batches += 1;
      this.#inFlight.push(this.#send(batch).then((settled) => this.#queueRecord(settled)));
    }
  }

  /** Local rejections go to the state's error list as they are found. */
  async #storeRejections(): Promise<void> {
    if (this.#rejectionsToStore.length === 0) return;
    const errors = this.#rejectionsToStore.splice(0);
    await this.#context.state.recordBatch({ ...this.#recordHeader(), acknowledged: [], errors });
  }

  /**
   * Durable before the request leaves: if its answer is lost (a cut connection, a 500 after the
   * service applied it, a kill), the next run sends these items whatever their fingerprint.
   */
  async #markInFlight(batch: ChangedItem[]): Promise<void> {
    const items = batch.map(({ key, externalId, storeId, index, pairs }) => ({ key, externalId, storeId, index, pairs }));
    await this.#context.state.markInFlight({ scope: this.#scope, kind: this.#adapter.kind, seq: this.#seq, items });
    this.#classifier!.written(batch);
  }

  async #send(batch: ChangedItem[]): Promise<Settled<Result>> {
    const { batchSize = 500, timeoutMs, totalTimeoutMs, maxRetries } = this.#options;
    try {
      const results = await this.#adapter.send(this.#context.client, batch.map((changed) => changed.item), { batchSize, signal: this.#signal, timeoutMs, totalTimeoutMs, maxRetries });
      return { batch, results };
    } catch (error) {
      return { batch, error };
    }
  }

  /**
   * Each answer is recorded as soon as it arrives, not when the next batch is ready: with few
   * changes in a long input that could be minutes later, and a crash meanwhile would resend it.
   */
  #queueRecord(settled: Settled<Result>): void {
    this.#recording = this.#recording
      .then(() => this.#record(settled))
      .catch((error: unknown) => {
        this.#recordFailure ??= { error };
      });
  }

  /** Acknowledged items move the state; the others (an item error, no answer) keep their in-flight mark. */
  async #record(settled: Settled<Result>): Promise<void> {
    const answer = readAnswer(settled, this.#adapter.rules);
    const errors = this.#tally.answered(answer);
    await this.#context.state.recordBatch({ ...this.#recordHeader(), acknowledged: answer.acknowledged, errors });
    this.#report();
  }

  #throwIfRecordFailed(): void {
    if (this.#recordFailure) throw this.#recordFailure.error;
  }

  /** Waits for every batch in flight and the record of its answer. */
  async #settleAll(): Promise<void> {
    while (this.#inFlight.length > 0) await this.#inFlight.shift();
    await this.#recording;
    this.#throwIfRecordFailed();
    this.#complete = true;
  }

  /** A complete run: its orphans counted and its end recorded. */
  async #finish(): Promise<RunOutcome<Result>> {
    const { state, clock } = this.#context;
    if (this.#dryRun) this.#report();
    const orphans = this.#dryRun ? null : await state.countOrphans(this.#scope, this.#adapter.kind, this.#seq);
    const outcome: RunOutcome<Result> = { runId: this.#runId, ...this.#tally.counts(this.#classifier), orphans, durationMs: clock.now() - this.#startedAt, results: this.#tally.results };
    if (!this.#dryRun) {
      await state.finishRun(this.#runId, { ...storedCounts(outcome, this.#isCatalog), finishedAt: clock.now(), outcome: 'completed', complete: true, orphans, error: null });
    }
    const call = currentCall();
    if (call) call.batches = this.#batches;
    return outcome;
  }

  /**
   * The input or a write failed, or the run was stopped: the batches already sent are answered (an
   * abort ends them at once) and what they acknowledged is kept. Returns the error to reject with.
   */
  async #fail(error: unknown): Promise<unknown> {
    this.#classifier?.close();
    await Promise.allSettled(this.#inFlight.splice(0));
    await this.#recording;
    const reason = this.#stop.signal.aborted ? this.#stop.signal.reason : error;
    if (!this.#dryRun) {
      const outcome = this.#options.signal?.aborted === true ? 'aborted' : 'failed';
      const finished = { ...storedCounts(this.#tally.counts(this.#classifier), this.#isCatalog), finishedAt: this.#context.clock.now(), outcome, complete: this.#complete, orphans: null, error: describe(reason) } as const;
      await this.#context.state.finishRun(this.#runId, finished).catch(() => {});
    }
    return reason;
  }

  async #end(): Promise<void> {
    this.#stopRenewing();
    if (this.#lease) await this.#context.state.releaseLease(this.#lease).catch(() => {});
  }

  /** What every record of this run's batches names: the run, now, and its seen marks' run. */
  #recordHeader() {
    return { scope: this.#scope, kind: this.#adapter.kind, runId: this.#runId, sentAt: this.#context.clock.now(), seen: { seq: this.#seq, marks: [] } };
  }

  get #isCatalog(): boolean {
    return this.#adapter.kind === 'catalog';
  }

  #report(): void {
    this.#options.onProgress?.(this.#tally.progress(this.#classifier!));
  }
}
