import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { isoAt } from '../clock.ts';
import { endpointShape, safeLog, type SandboxDeliveryLog } from '../log.ts';
import type { DeliveryRecord, SandboxState, WebhookEndpointRecord } from '../state.ts';
import { postOnce, type AttemptOutcome } from './post-once.ts';
import { MAX_ATTEMPTS, retryDelayMs } from './retry-schedule.ts';
import { signDelivery } from './signing.ts';
import type { ReceiverPolicy } from './ssrf.ts';

/** A delivery as the log of spec 2.6 shows it (never the payload), plus the endpoint it belongs to. */
export interface DeliveryView {
  id: string;
  webhook_id: string;
  event: string;
  status: DeliveryRecord['status'];
  attempt_count: number;
  response_status: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
}

export interface DeliveryEngineOptions {
  state: SandboxState;
  clock: Clock;
  timeScale: number;
  answerTimeoutMs: number;
  receivers: ReceiverPolicy;
  /** Told about every attempt that finished. */
  log?: (entry: SandboxDeliveryLog) => void;
}

interface Waiter {
  settled: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Sends events with the transport of spec part 6: signed POSTs, attempt 1 at once, then the retry
 * schedule scaled by `timeScale`, `dead` after attempt 6. Waiting is event-driven: every state
 * change re-checks the waiters, so tests never sleep.
 */
export class DeliveryEngine {
  readonly #options: DeliveryEngineOptions;
  readonly #timers = new Map<string, () => void>();
  readonly #active = new Set<string>();
  /**
   * One controller per attempt in flight, aborted by `close()`. A single signal shared by every
   * attempt would collect one 'abort' listener per attempt: hundreds of deliveries in flight made
   * Node 20 print MaxListenersExceededWarning.
   */
  readonly #inFlight = new Set<AbortController>();
  #closed = false;
  #waiters: Waiter[] = [];
  readonly #log: (entry: SandboxDeliveryLog) => void;

  constructor(options: DeliveryEngineOptions) {
    this.#options = options;
    this.#log = safeLog(options.log);
  }

  /** Creates one delivery per endpoint and starts attempt 1 of each; returns their ids. */
  emit(event: string, data: unknown, endpoints: readonly WebhookEndpointRecord[]): string[] {
    return endpoints.map((endpoint) => {
      const record: DeliveryRecord = {
        id: randomUUID(), webhook_id: endpoint.id, event, status: 'pending', attempt_count: 0,
        response_status: null, last_error: null, created_at: isoAt(this.#options.clock), next_attempt_at: null, data,
      };
      this.#options.state.deliveries.set(record.id, record);
      this.#active.add(record.id);
      void this.#attempt(record);
      return record.id;
    });
  }

  /** Stops the retries of a deleted endpoint's deliveries and forgets them. */
  forgetEndpoint(webhookId: string): void {
    for (const record of [...this.#options.state.deliveries.values()]) {
      if (record.webhook_id !== webhookId) continue;
      this.#stopTimer(record.id);
      this.#active.delete(record.id);
      this.#options.state.deliveries.delete(record.id);
    }
    this.#notify();
  }

  /** Resolves once no delivery is in flight or waiting for a retry (all `delivered` or `dead`). */
  idle(): Promise<void> {
    return this.#wait(() => this.#active.size === 0 || this.#closed);
  }

  /** Resolves with the delivery once `until` holds (default: `delivered` or `dead`). */
  async waitFor(id: string, until: (delivery: DeliveryView) => boolean = isTerminal): Promise<DeliveryView> {
    const read = () => {
      const record = this.#options.state.deliveries.get(id);
      if (!record) throw new Error(`No delivery ${id} (unknown id, or its endpoint was deleted).`);
      return viewOf(record);
    };
    await this.#wait(() => until(read()));
    return read();
  }

  /** Cancels every retry timer and in-flight attempt; pending waits settle. */
  close(): void {
    this.#closed = true;
    for (const attempt of this.#inFlight) attempt.abort();
    this.#inFlight.clear();
    for (const id of [...this.#timers.keys()]) this.#stopTimer(id);
    this.#notify(); // settles `idle()` waiters
    for (const waiter of this.#waiters) waiter.reject(new Error('The sandbox was closed.'));
    this.#waiters = [];
  }

  async #attempt(record: DeliveryRecord): Promise<void> {
    const { state, clock } = this.#options;
    const endpoint = state.webhooks.get(record.webhook_id);
    if (!endpoint || this.#closed) return;
    record.attempt_count += 1;
    record.status = 'pending';
    record.next_attempt_at = null;
    this.#notify();
    let outcome: AttemptOutcome;
    try {
      outcome = await this.#send(record, endpoint);
    } catch (error) {
      outcome = { status: null, error: `sandbox could not send: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (this.#closed || !state.deliveries.has(record.id)) return;
    record.response_status = outcome.status;
    let retryInMs: number | null = null;
    if (outcome.error === null) {
      record.status = 'delivered';
      endpoint.consecutive_failures = 0;
      this.#active.delete(record.id);
    } else {
      endpoint.consecutive_failures += 1;
      record.last_error = outcome.error;
      const delay = record.attempt_count < MAX_ATTEMPTS ? retryDelayMs(record.attempt_count, this.#options.timeScale) : null;
      if (delay === null) {
        record.status = 'dead';
        this.#active.delete(record.id);
      } else {
        record.status = 'retrying';
        retryInMs = delay;
        record.next_attempt_at = isoAt(clock, delay);
        this.#timers.set(record.id, clock.setTimeout(() => {
          this.#timers.delete(record.id);
          void this.#attempt(record);
        }, delay));
      }
    }
    this.#report(record, endpoint, outcome, retryInMs);
    this.#notify();
  }

  #report(record: DeliveryRecord, endpoint: WebhookEndpointRecord, outcome: AttemptOutcome, retryInMs: number | null): void {
    this.#log({
      type: 'delivery', event: record.event, deliveryId: record.id, webhookId: endpoint.id, endpoint: endpointShape(endpoint.url),
      attempt: record.attempt_count, maxAttempts: MAX_ATTEMPTS, status: outcome.status,
      outcome: record.status === 'retrying' ? 'retrying' : record.status === 'dead' ? 'dead' : 'delivered',
      error: outcome.error, retryInMs,
    });
  }

  /** Spec 6.1/6.2: same delivery id every attempt; new timestamp and signature each time. */
  async #send(record: DeliveryRecord, endpoint: WebhookEndpointRecord): Promise<AttemptOutcome> {
    const attempt = new AbortController();
    this.#inFlight.add(attempt);
    try {
      return await this.#post(record, endpoint, attempt.signal);
    } finally {
      this.#inFlight.delete(attempt);
    }
  }

  async #post(record: DeliveryRecord, endpoint: WebhookEndpointRecord, signal: AbortSignal): Promise<AttemptOutcome> {
    const { clock, receivers, answerTimeoutMs } = this.#options;
    const url = new URL(endpoint.url);
    const blocked = await receivers.blockReason(url);
    if (blocked) return { status: null, error: `anti-SSRF block: ${blocked}` };
    const ts = Math.floor(clock.now() / 1000);
    const body = JSON.stringify({ event: record.event, delivery_id: record.id, ts, data: record.data });
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'integration-sdk-sandbox',
      'x-service-event': record.event,
      'x-service-delivery-id': record.id,
      'x-service-timestamp': String(ts),
      'x-service-signature-256': signDelivery(endpoint.secret, ts, body),
    };
    return postOnce(url, headers, body, { clock, timeoutMs: answerTimeoutMs, signal });
  }

  #stopTimer(id: string): void {
    this.#timers.get(id)?.();
    this.#timers.delete(id);
  }

  #wait(settled: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = { settled, resolve, reject };
      if (!this.#check(waiter)) this.#waiters.push(waiter);
    });
  }

  #check(waiter: Waiter): boolean {
    try {
      if (!waiter.settled()) return false;
      waiter.resolve();
    } catch (error) {
      waiter.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return true;
  }

  #notify(): void {
    this.#waiters = this.#waiters.filter((waiter) => !this.#check(waiter));
  }
}

export function isTerminal(delivery: Pick<DeliveryView, 'status'>): boolean {
  return delivery.status === 'delivered' || delivery.status === 'dead';
}

export function viewOf(record: DeliveryRecord): DeliveryView {
  const { data: _payload, ...view } = record;
  return { ...view };
}
