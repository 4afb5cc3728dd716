import { sleep, systemClock, type Clock } from '../clock.ts';
import { traceCall } from '../diagnostics.ts';
import { ApiError, ConnectionError, IntegrationError } from '../errors/index.ts';
import {
  CreatedWebhookSchema,
  WebhookDeliveryListSchema,
  WebhookEndpointListSchema,
  WebhookTestResultSchema,
  type CreatedWebhook,
  type SubscribableEvent,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookTestResult,
} from '../schemas/index.ts';
import { Deadline } from '../transport/deadline.ts';
import { InputChecks, segment } from '../transport/input-checks.ts';
import { LATE_REGISTRATION_WATCH_MS, LateRegistrations, shapeKey } from './late-registrations.ts';
import { neverReachedService } from '../transport/retry-policy.ts';
import type { CallOptions, Requester } from '../transport/types.ts';

/** Body of `webhooks.create`. */
export interface CreateWebhookInput {
  /** HTTPS URL of a public receiver (spec 6.3); refused with `SsrfBlockedError` otherwise. */
  url: string;
  /** Events to subscribe to: `order.created`, `order.status_changed`. */
  events: SubscribableEvent[];
}

/** `webhooks.deliveries(id, options)`: the call options plus how many records to read. */
export interface DeliveriesOptions extends CallOptions {
  /**
   * 1–100, newest first.
   *
   * @default 20 (the service's)
   * @example
   * ```ts
   * await client.webhooks.deliveries(id, { limit: 100 });
   * ```
   */
  limit?: number;
}

/** Webhook endpoints and their delivery log (spec 4.5, scope `webhooks:manage`). */
export class WebhooksResource {
  readonly #requester: Requester;
  readonly #clock: Clock;
  readonly #callDefaults: () => CallDefaults;
  /** Failed creates of this client whose endpoint may still be registered. */
  readonly #late: LateRegistrations;

  /**
   * `callDefaults`: the client's `timeoutMs` (the scale of the late look after a failed create) and
   * `totalTimeoutMs` (the clean-up of a failed create ends within it).
   */
  constructor(requester: Requester, clock: Clock = systemClock, callDefaults: () => CallDefaults = () => ({ timeoutMs: 30_000, totalTimeoutMs: 120_000 })) {
    this.#requester = requester;
    this.#clock = clock;
    this.#callDefaults = callDefaults;
    this.#late = new LateRegistrations(clock);
  }

  /**
   * POST /webhooks. The answer holds the endpoint's `secret`, shown this once: store it. Never
   * repeated unless the service certainly did not receive it (refused connection, 429, 503).
   *
   * Leaves no orphan: after a failure where the service may have registered the endpoint anyway
   * (500, 502, 504, a reset, a time-out after sending), whose secret nobody received, the SDK
   * deletes every endpoint with the same URL and events that was not listed before the create;
   * when the service may still be working on it (a time-out, a reset, 502, 504) and none is there
   * yet, it looks once more after a short delay (the attempt's `timeoutMs`, at most 10 s). The
   * clean-up ends within the call's `totalTimeoutMs` (counted from the start of `create`) and at
   * the call's `signal`. Then it throws the original error, whose message says whether an endpoint
   * may still appear. When one may (or the clean-up failed, or had no time), this client remembers
   * the failed call for 10 minutes: its next `create` or `list` deletes an endpoint with that URL
   * and events that was not there when the failed call started and whose secret this client did
   * not receive, so creating again ends with one endpoint. A create the caller aborts after its
   * request left rejects with the signal's reason at once, without a clean-up, and is remembered
   * the same way. Do not register one URL from several processes at once: another process's
   * endpoint created meanwhile would be taken for ours.
   *
   * @example
   * ```ts
   * const endpoint = await client.webhooks.create({ url: 'https://erp.example.com/hooks', events: ['order.created', 'order.status_changed'] });
   * await secrets.put('webhook-secret', endpoint.secret);
   * ```
   */
  create(input: CreateWebhookInput, options?: CallOptions): Promise<CreatedWebhook> {
    return traceCall('webhooks.create', async () => {
      const checks = new InputChecks().text('url', input?.url);
      if (!Array.isArray(input?.events) || input.events.length === 0) checks.add('events', 'must be a non-empty array of event names');
      checks.throwIfAny();
      const endsAt = this.#clock.now() + (options?.totalTimeoutMs ?? this.#callDefaults().totalTimeoutMs);
      // A create never deletes what was there: two endpoints may share a URL (the limit is the service's to enforce).
      const existing = await this.#endpointsBefore(options);
      const before = existing === undefined ? undefined : new Set(existing.map((endpoint) => endpoint.id));
      const settled = this.#late.sending(input);
      let sent = false;
      try {
        const created = await this.#requester.send({
          method: 'POST',
          path: '/webhooks',
          route: '/webhooks',
          body: { url: input.url, events: input.events },
          schema: CreatedWebhookSchema,
          retry: 'unsafe',
          options,
          onSend: () => void (sent = true),
        });
        this.#late.received(created.id);
        return created;
      } catch (error) {
        if (before === undefined) throw error;
        if (error instanceof IntegrationError && mayHaveActed(error)) {
          const outcome = await this.#removeOrphans(input, before, options, mayStillBeWorking(error), endsAt);
          if (outcome !== 'removed' && outcome !== 'none') this.#late.expect(input, before);
          error.message += cleanupNote(outcome);
        } else if (sent && options?.signal?.aborted) {
          // The caller's abort: the call ends now, without a clean-up; the request had left, so its
          // endpoint may be registered, now or later, and the next create or list deletes it.
          this.#late.expect(input, before);
        }
        throw error;
      } finally {
        settled();
      }
    });
  }

  /**
   * The endpoints there before a create, without the late ones of this client's failed creates
   * (deleted now); none when the list is refused (401, 403), so the create throws its own error.
   */
  async #endpointsBefore(options: CallOptions | undefined): Promise<WebhookEndpoint[] | undefined> {
    try {
      return await this.#withoutLateOrphans(await this.#list(options), options);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return undefined;
      throw error;
    }
  }

  /**
   * Deletes the endpoints like `input` that were not in `before`: the ones a failed create may have
   * made. When the service may still be working on the create and none is there yet, looks again
   * once the request would have finished there. Ends by `endsAt` (the create's `totalTimeoutMs`)
   * and at the caller's signal: what it has no time to look for is left to the late watch.
   */
  async #removeOrphans(input: CreateWebhookInput, before: ReadonlySet<string>, options: CallOptions | undefined, lookAgain: boolean, endsAt: number): Promise<CleanupOutcome> {
    const leftMs = (): number => Math.floor(endsAt - this.#clock.now());
    if (leftMs() <= 0) return 'no-time';
    // One bound for every request and wait of the clean-up, time queued behind the rate limiter included.
    const deadline = new Deadline(this.#clock, leftMs(), options?.signal, () => new DOMException('the create ran out of its totalTimeoutMs', 'TimeoutError'));
    const cleanup = (): CallOptions => ({ ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), totalTimeoutMs: Math.max(1, leftMs()), signal: deadline.signal });
    const removeNow = async (): Promise<number> => {
      let removed = 0;
      for (const endpoint of await this.#list(cleanup())) {
        if (before.has(endpoint.id) || shapeKey(endpoint) !== shapeKey(input)) continue;
        await this.#delete(endpoint.id, cleanup());
        removed += 1;
      }
      return removed;
    };
    try {
      if ((await removeNow()) > 0) return 'removed';
      if (!lookAgain) return 'none';
      const delayMs = Math.min(LATE_LOOK_MAX_MS, options?.timeoutMs ?? this.#callDefaults().timeoutMs);
      // A second look needs time after the wait: none is started that would end at the deadline.
      if (delayMs >= leftMs()) return 'looked-once';
      await sleep(this.#clock, delayMs, deadline.signal);
      return (await removeNow()) > 0 ? 'removed' : 'may-appear';
    } catch {
      return deadline.signal.aborted ? 'cut-short' : 'unchecked';
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Deletes the endpoints of `listed` that this client's failed creates registered late (see
   * `create`), and returns the others. One it cannot delete now stays listed, and is looked for
   * again next time; the caller's abort ends the call.
   */
  async #withoutLateOrphans(listed: WebhookEndpoint[], options: CallOptions | undefined): Promise<WebhookEndpoint[]> {
    const claims = this.#late.claim(listed);
    if (claims.length === 0) return listed;
    const gone = new Set<string>();
    for (const claim of claims) {
      try {
        await this.#delete(claim.endpoint.id, options);
        gone.add(claim.endpoint.id);
      } catch (error) {
        if (error instanceof IntegrationError && isNotFound(error)) {
          gone.add(claim.endpoint.id);
          continue;
        }
        claim.release();
        if (options?.signal?.aborted) throw error;
      }
    }
    return listed.filter((endpoint) => !gone.has(endpoint.id));
  }

  /**
   * GET /webhooks: the key's endpoints with `consecutive_failures` (never a secret). An endpoint
   * registered late by a failed `create` of this client (see there) is deleted, not listed.
   *
   * @example
   * ```ts
   * for (const endpoint of await client.webhooks.list()) console.log(endpoint.url, endpoint.consecutive_failures);
   * ```
   */
  list(options?: CallOptions): Promise<WebhookEndpoint[]> {
    return traceCall('webhooks.list', async () => this.#withoutLateOrphans(await this.#list(options), options));
  }

  // Untraced: `create` lists and deletes as part of its own call (diagnostics: one call per method called).
  async #list(options: CallOptions | undefined): Promise<WebhookEndpoint[]> {
    return (await this.#requester.send({ method: 'GET', path: '/webhooks', schema: WebhookEndpointListSchema, retry: 'safe', options })).data;
  }

  /**
   * DELETE /webhooks/{id}. An unknown id throws `NotFoundError`; but when a retry meets 404, an
   * earlier attempt did delete it, and the call resolves.
   *
   * @example
   * ```ts
   * await client.webhooks.delete(endpoint.id);
   * ```
   */
  delete(webhookId: string, options?: CallOptions): Promise<void> {
    return traceCall('webhooks.delete', () => this.#delete(webhookId, options));
  }

  async #delete(webhookId: string, options: CallOptions | undefined): Promise<void> {
    new InputChecks().text('webhookId', webhookId).throwIfAny();
    await this.#requester.send({ method: 'DELETE', path: `/webhooks/${segment(webhookId, 'webhookId')}`, route: '/webhooks/{id}', retry: 'safe', options, alreadyDoneOnRetry: isNotFound });
  }

  /**
   * GET /webhooks/{id}/deliveries: the delivery log, newest first, without payloads.
   *
   * @example
   * ```ts
   * const [last] = await client.webhooks.deliveries(endpoint.id, { limit: 1 });
   * console.log(last?.status, last?.response_status, last?.last_error);
   * ```
   */
  deliveries(webhookId: string, options: DeliveriesOptions = {}): Promise<WebhookDelivery[]> {
    return traceCall('webhooks.deliveries', async () => {
      const { limit, ...callOptions } = options;
      new InputChecks().text('webhookId', webhookId).optionalInteger('limit', limit, 1, 100).throwIfAny();
      const page = await this.#requester.send({
        method: 'GET',
        path: `/webhooks/${segment(webhookId, 'webhookId')}/deliveries`,
        route: '/webhooks/{id}/deliveries',
        query: { limit },
        schema: WebhookDeliveryListSchema,
        retry: 'safe',
        options: callOptions,
      });
      return page.data;
    });
  }

  /**
   * POST /webhooks/{id}/test: sends a `webhook.test` delivery to the endpoint. Repeated only when
   * the service certainly did not receive it.
   *
   * @example
   * ```ts
   * const { delivery_id } = await client.webhooks.test(endpoint.id);
   * ```
   */
  test(webhookId: string, options?: CallOptions): Promise<WebhookTestResult> {
    return traceCall('webhooks.test', async () => {
      new InputChecks().text('webhookId', webhookId).throwIfAny();
      return this.#requester.send({ method: 'POST', path: `/webhooks/${segment(webhookId, 'webhookId')}/test`, route: '/webhooks/{id}/test', schema: WebhookTestResultSchema, retry: 'unsafe', options });
    });
  }
}

/** The late look after a failed create waits the attempt's `timeoutMs`, but never more than this. */
const LATE_LOOK_MAX_MS = 10_000;

/** The client's call defaults a create reads (see the constructor). */
export interface CallDefaults {
  timeoutMs: number;
  totalTimeoutMs: number;
}

type CleanupOutcome = 'removed' | 'none' | 'may-appear' | 'looked-once' | 'no-time' | 'cut-short' | 'unchecked';

const DELETED_LATER = `this client's next webhooks.create or webhooks.list within ${LATE_REGISTRATION_WATCH_MS / 60_000} minutes deletes it (elsewhere, delete one whose secret you do not hold)`;

/** What the failed create's error adds to its message, so the caller knows whether to look again. */
function cleanupNote(outcome: CleanupOutcome): string {
  switch (outcome) {
    case 'removed':
      return '; the endpoint it registered anyway was deleted (no orphan): call create again';
    case 'none':
      return '; no endpoint was registered by it';
    case 'may-appear':
      return `; no endpoint with this URL and events was found to delete, looked for twice, but the service may still register one: ${DELETED_LATER}`;
    case 'looked-once':
      return `; no endpoint with this URL and events was found to delete, looked for once (the call's totalTimeoutMs left no time to look again), but the service may still register one: ${DELETED_LATER}`;
    case 'no-time':
      return `; the call's totalTimeoutMs left no time to look for an endpoint the service may still register: ${DELETED_LATER}`;
    case 'cut-short':
      return `; the clean-up was cut short by the call's signal or totalTimeoutMs, so one with this URL and events may exist or still appear: ${DELETED_LATER}`;
    case 'unchecked':
      return `; the clean-up could not list or delete endpoints, so one with this URL and events may exist or still appear: ${DELETED_LATER}`;
  }
}

/**
 * Whether the service may still be working on a create the client gave up on: a time-out, a lost
 * connection, or a gateway's 502/504 (the gateway gave up, the service may not have). A 500 is the
 * service's own final answer.
 */
function mayStillBeWorking(error: IntegrationError): boolean {
  if (error instanceof ApiError) return error.status === 502 || error.status === 504;
  return error instanceof ConnectionError;
}

/** Whether a failed create may still have registered the endpoint (the service may have acted). */
function mayHaveActed(error: IntegrationError): boolean {
  if (error instanceof ApiError) return error.status === 500 || error.status === 502 || error.status === 504;
  return error instanceof ConnectionError && !neverReachedService(error);
}

function isNotFound(error: IntegrationError): boolean {
  return error instanceof ApiError && error.status === 404 && error.code === 'NOT_FOUND';
}
