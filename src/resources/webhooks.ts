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
import { InputChecks, segment } from '../transport/input-checks.ts';
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

  constructor(requester: Requester) {
    this.#requester = requester;
  }

  /**
   * POST /webhooks. The answer holds the endpoint's `secret`, shown this once: store it. Never
   * repeated unless the service certainly did not receive it (refused connection, 429, 503).
   *
   * Leaves no orphan: after a failure where the service may have registered the endpoint anyway
   * (500, 502, 504, a reset, a time-out after sending), whose secret nobody received, the SDK
   * deletes every endpoint with the same URL and events that was not listed before the create,
   * then throws the original error (also if that clean-up fails: check `list()`). Calling `create`
   * again is then safe. Do not register one URL from several processes at once: another process's
   * endpoint created at that very moment would be taken for ours.
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
      const before = await this.#endpointIds(options);
      try {
        return await this.#requester.send({ method: 'POST', path: '/webhooks', route: '/webhooks', body: { url: input.url, events: input.events }, schema: CreatedWebhookSchema, retry: 'unsafe', options });
      } catch (error) {
        if (before !== undefined && error instanceof IntegrationError && mayHaveActed(error)) await this.#removeOrphans(input, before, options).catch(() => {});
        throw error;
      }
    });
  }

  /** The endpoints there before a create; none when the list is refused (401, 403), so the create throws its own error. */
  async #endpointIds(options: CallOptions | undefined): Promise<Set<string> | undefined> {
    try {
      return new Set((await this.#list(options)).map((endpoint) => endpoint.id));
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return undefined;
      throw error;
    }
  }

  /** Deletes the endpoints like `input` that were not in `before`: the ones a failed create may have made. */
  async #removeOrphans(input: CreateWebhookInput, before: ReadonlySet<string>, options: CallOptions | undefined): Promise<void> {
    // Not the caller's signal or deadline: they may be what ended the create, and the clean-up must still run.
    const cleanup: CallOptions = options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
    const events = [...new Set(input.events)].sort().join(',');
    for (const endpoint of await this.#list(cleanup)) {
      if (before.has(endpoint.id) || endpoint.url !== input.url || [...new Set(endpoint.events)].sort().join(',') !== events) continue;
      await this.#delete(endpoint.id, cleanup);
    }
  }

  /**
   * GET /webhooks: the key's endpoints with `consecutive_failures` (never a secret).
   *
   * @example
   * ```ts
   * for (const endpoint of await client.webhooks.list()) console.log(endpoint.url, endpoint.consecutive_failures);
   * ```
   */
  list(options?: CallOptions): Promise<WebhookEndpoint[]> {
    return traceCall('webhooks.list', () => this.#list(options));
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

/** Whether a failed create may still have registered the endpoint (the service may have acted). */
function mayHaveActed(error: IntegrationError): boolean {
  if (error instanceof ApiError) return error.status === 500 || error.status === 502 || error.status === 504;
  return error instanceof ConnectionError && !neverReachedService(error);
}

function isNotFound(error: IntegrationError): boolean {
  return error instanceof ApiError && error.status === 404 && error.code === 'NOT_FOUND';
}
