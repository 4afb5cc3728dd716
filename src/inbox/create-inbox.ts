import { systemClock, type Clock } from '../clock.ts';
import { registerOpenInbox } from '../diagnostics.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { tenantsReceiving } from '../tenants/receiving.ts';
import { tenantIdProblem } from '../tenants/tenant-id.ts';
import type { Tenants } from '../tenants/types.ts';
import { toleranceOf, type WebhookSecret } from '../webhooks/signature.ts';
import { fixedSecrets, registrySecrets, type DeliverySecrets, type TenantRequest } from './delivery-secrets.ts';
import { createInboxHandler, type InboxHandler } from './receive.ts';
import { acknowledgeMissed, everyTenantsMissed } from './missed.ts';
import { checkEndpointIds, currentMissed, reconcileStore, type ReconcileOptions, type ReconcileReport } from './reconcile.ts';
import { reconcileTenants, type TenantsReconcileOptions, type TenantsReconcileReport } from './reconcile-tenants.ts';
import type { InboxEntry, InboxEntryStatus, InboxEntryWithPayload, InboxStats, InboxStore, MissedDelivery, MissedRecord } from './store.ts';
import { StoreTimeout } from './timeouts.ts';
import { startWorker, type InboxWorker, type StartWorkerOptions } from './worker.ts';

const DAY = 86_400_000;
const STATUSES: readonly InboxEntryStatus[] = ['pending', 'processing', 'done', 'dead'];
/** Delivery ids outlive the service's retry window (about 14 h 36 min) by a wide margin. */
const MIN_ID_DAYS = 7;

/** Options of {@link createInbox}. */
export interface InboxOptions {
  /**
   * The endpoint's `whsec_` secret, or several while rotating (or when one URL was registered
   * twice: the same order event through each runs once). For one merchant; for many, `tenants`.
   */
  secret?: WebhookSecret;
  /**
   * The tenants registry (`createTenants` from `integration-sdk/tenants`): one receiver for many
   * merchants. The tenant is the URL's last path segment (or `tenantFrom`); its deliveries are
   * verified with its own secrets only, and its entries, orders and counts kept apart.
   */
  tenants?: Tenants;
  /** Where the tenant id is in a request, when not the URL's last path segment. */
  tenantFrom?: (request: TenantRequest) => string | null | undefined;
  store: InboxStore;
  /** How far `X-Service-Timestamp` may be from now, in seconds. @default 300 */
  toleranceSeconds?: number;
  /**
   * `done` entries lose their payload (personal data) `days` after they finished (default 7);
   * their row, and so their delivery id, is deleted after `max(days, 7)` days.
   */
  retention?: { days?: number };
  /** How long the receiver waits for the store before answering 503, in ms. @default 3000 */
  storeTimeoutMs?: number;
  /**
   * Where an authentic delivery goes whose body does not match the SDK's schema (a null e-mail,
   * a pickup order without an address, a number sent as a string). It is always stored and
   * answered 2xx, marked with its schema issues (paths, never values), and counted by
   * `stats().invalidPayload`. `'dead'`: stored as `dead` with the reason as `lastError`, so no
   * handler typed for the schema meets it until you `retry` it; `'handler'`: handed to its
   * handler like any entry, with the issues in `ctx.schemaIssues`.
   * @default 'dead'
   */
  invalidPayload?: 'dead' | 'handler';
  /**
   * The webhook endpoints that deliver to this inbox (their ids, from `webhooks.create` or
   * `webhooks list`): only their failed deliveries count in `reconcile`'s `missed`. Left out,
   * reconcile guesses them: the endpoints with a delivery the inbox holds.
   */
  endpointIds?: readonly string[];
  /** Told about deliveries refused and store errors (never with a payload). */
  onError?: (error: unknown) => void;
  /** Time and timers; for tests. @default the system clock */
  clock?: Clock;
  /** Jitter source in [0, 1); for tests. @default Math.random */
  random?: () => number;
}

/**
 * What `inbox.purge` deletes. `done` entries finished within the last 7 days keep their row (and
 * so their delivery id, which makes a late retry of the service a duplicate) and lose only their
 * payload; older ones are deleted. `dead` entries are deleted whole.
 */
export interface PurgeOptions {
  status: 'done' | 'dead';
  /** Entries finished more than this many days ago. @default 0 (all) */
  olderThanDays?: number;
  /** Only this tenant's entries. @default every tenant's */
  tenant?: string;
}

/** Narrows a read or a retry to one tenant of an inbox given `tenants`; without it, every tenant's. */
export interface TenantOption {
  tenant?: string;
}

/** A durable inbox: {@link createInbox}. */
export interface Inbox {
  /** Verifies, stores, answers: `POST` deliveries only. A Fetch handler with `.node` for node:http / Express. */
  readonly handler: InboxHandler;
  /** Starts a worker on this store (in this process; any other process can start its own). */
  startWorker(options: StartWorkerOptions): InboxWorker;
  /**
   * The counts, of every tenant's entries or (`{ tenant }`) of one.
   *
   * @example
   * ```ts
   * const { pending, dead } = await inbox.stats({ tenant: 'loja-42' });
   * ```
   */
  stats(filter?: TenantOption): Promise<InboxStats>;
  /**
   * Entries oldest first, without their payloads; of one status, of one tenant. An entry stored as
   * the copy of another (the same order event through a second endpoint) has `copyOf`.
   */
  entries(filter?: { status?: InboxEntryStatus; tenant?: string }): AsyncIterable<InboxEntry>;
  /** One entry with its payload (personal data), by delivery id (and tenant, where two tenants hold the id). */
  entry(deliveryId: string, options?: TenantOption): Promise<InboxEntryWithPayload | undefined>;
  /** A `dead` (or `done`) entry back to `pending`, attempts from 0; `false` when there is no such entry. */
  retry(deliveryId: string, options?: TenantOption): Promise<boolean>;
  /** Every `dead` entry (of one tenant, with `{ tenant }`) back to `pending`; returns how many. */
  retryDead(options?: TenantOption): Promise<number>;
  /**
   * Deletes finished entries (or, for `done` entries younger than the 7-day id window, their
   * payload only); returns how many were deleted or emptied.
   */
  purge(options: PurgeOptions): Promise<number>;
  /** Stops this process's workers (waiting for their handlers) and closes the store. */
  close(): Promise<void>;
  /**
   * Recovers what the webhooks missed: re-reads stale, non-final orders through `client.orders.get`,
   * stores a synthetic `order.status_changed` (and, for an order known only from status changes, a
   * synthetic `order.created`) marked `source: 'reconcile'` for each difference, which the usual
   * handlers then run in the order's turn; lists in `missed` the deliveries the service holds as
   * `dead` or `retrying` that never arrived. See docs/inbox.md, "Reconciliation".
   *
   * @example
   * ```ts
   * const report = await inbox.reconcile({ client, staleAfterMinutes: 60, maxReads: 500 });
   * if (report.missed.length > 0) logger.warn({ missed: report.missed.length }, 'deliveries never arrived');
   * ```
   */
  reconcile(options: ReconcileOptions): Promise<ReconcileReport>;
  /**
   * For an inbox of many merchants: each active tenant's stale orders read back within one shared
   * `maxReads` budget, least recently reconciled tenant first, with a report per tenant; `missed`
   * from each tenant's own endpoints. See docs/inbox.md, "Many merchants".
   *
   * @example
   * ```ts
   * const { tenants: reports } = await inbox.reconcile({ tenants, maxReads: 500 });
   * for (const report of reports) if (report.missed.length > 0) logger.warn({ tenant: report.tenant }, 'deliveries never arrived');
   * ```
   */
  reconcile(options: TenantsReconcileOptions): Promise<TenantsReconcileReport>;
  /** When the last reconcile (of a tenant, with `{ tenant }`) ran and the missed deliveries still open; `undefined` before the first. */
  lastReconcile(options?: TenantOption): Promise<{ ranAt: number; missed: MissedDelivery[] } | undefined>;
  /**
   * The missed deliveries still open (the dashboard lists them with a button for
   * {@link acknowledgeMissed}), oldest first; with `{ ended: true }` the ones that ended, most
   * recently first, each with how, when and by whom. `[]` before the first reconcile.
   *
   * @example
   * ```ts
   * for (const missed of await inbox.missed()) console.log(missed.deliveryId, missed.event, missed.createdAt);
   * ```
   */
  missed(options?: { ended?: boolean; limit?: number; tenant?: string }): Promise<MissedRecord[]>;
  /**
   * Ends an open missed delivery (or every one, with `'all'`) after a person has dealt with it (a
   * missed `order.created` found in the platform's dashboard); recorded with `by` and the time.
   * Returns how many were acknowledged (0: no open miss has that id).
   *
   * @example
   * ```ts
   * await inbox.acknowledgeMissed('7f9c0d2e-...', { by: 'maria@erp' });
   * ```
   */
  acknowledgeMissed(deliveryId: string, options?: { by?: string; tenant?: string }): Promise<number>;
}

/**
 * A durable webhook inbox: the receiver answers 2xx only once a delivery is stored, deduplicated by
 * delivery id; workers in any process sharing the store run each event at least once, one event of
 * an order at a time, with retries, then `dead`.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createInbox } from 'integration-sdk/inbox';
 * import { sqliteStore } from 'integration-sdk/inbox/sqlite';
 *
 * const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET!, store: sqliteStore({ path: './integration-inbox.db' }) });
 * express().post('/webhooks/integration', inbox.handler.node).listen(3000);
 * const worker = inbox.startWorker({
 *   handlers: { 'order.created': async (event) => saveOrder(event.data) },
 *   concurrency: 4,
 * });
 * process.on('SIGTERM', () => void inbox.close());
 * ```
 */
export function createInbox(options: InboxOptions): Inbox {
  const { store } = options ?? {};
  if (!store || typeof store.insert !== 'function' || typeof store.claim !== 'function') {
    throw new ConfigurationError('createInbox needs { store }: sqliteStore(...) from integration-sdk/inbox/sqlite, postgresStore(...) from integration-sdk/inbox/postgres, or your own InboxStore.');
  }
  const tenants = options.tenants;
  if (tenants !== undefined && options.secret !== undefined) {
    throw new ConfigurationError('createInbox takes { secret } (one merchant) or { tenants } (many), not both: a tenant\'s deliveries are verified with its own secrets.');
  }
  const receiving = tenants === undefined ? undefined : tenantsReceiving(tenants);
  if (tenants !== undefined && receiving === undefined) {
    throw new ConfigurationError('createInbox: tenants must be the registry createTenants(...) from integration-sdk/tenants returns.');
  }
  if (options.tenantFrom !== undefined && (typeof options.tenantFrom !== 'function' || tenants === undefined)) {
    throw new ConfigurationError('createInbox: tenantFrom must be a function, and goes with { tenants }.');
  }
  const secrets = Array.isArray(options.secret) ? options.secret : [options.secret];
  if (receiving === undefined && (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || secret === ''))) {
    throw new ConfigurationError('createInbox needs { secret }: the endpoint secret (a non-empty string, or an array of them while rotating), or { tenants } for many merchants.');
  }
  // Checked here rather than on each delivery, where a NaN would fail every one of them.
  const toleranceSeconds = toleranceOf(options.toleranceSeconds);
  const storeTimeoutMs = options.storeTimeoutMs ?? 3000;
  if (typeof storeTimeoutMs !== 'number' || !Number.isFinite(storeTimeoutMs) || storeTimeoutMs <= 0) {
    throw new ConfigurationError('createInbox: storeTimeoutMs must be a number of milliseconds > 0.');
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') throw new ConfigurationError('createInbox: onError must be a function when given.');
  if (checkEndpointIds(options.endpointIds).length > 0) throw new ConfigurationError('createInbox: endpointIds must be a non-empty array of webhook endpoint ids when given.');
  const invalidPayload = options.invalidPayload ?? 'dead';
  if (invalidPayload !== 'dead' && invalidPayload !== 'handler') throw new ConfigurationError("createInbox: invalidPayload must be 'dead' or 'handler'.");
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const reportError = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // A failing logger must not change anything.
    }
  };
  const deliverySecrets: DeliverySecrets = receiving
    ? registrySecrets(receiving, { tenantFrom: options.tenantFrom, clock, onError: reportError })
    : fixedSecrets(secrets as string[]);
  if (options.retention !== undefined && (typeof options.retention !== 'object' || options.retention === null)) {
    throw new ConfigurationError('createInbox: retention must be an object such as { days: 7 }.');
  }
  const retentionDays = options.retention?.days ?? 7;
  if (typeof retentionDays !== 'number' || !Number.isFinite(retentionDays) || retentionDays < 0) {
    throw new ConfigurationError('createInbox: retention.days must be zero or more.');
  }

  let migration: Promise<void> | undefined;
  const ready = () => (migration ??= store.migrate().catch((error: unknown) => {
    migration = undefined;
    throw error;
  }));
  const localListeners = new Set<() => void>();
  const workers = new Set<InboxWorker>();
  let closed = false;
  let nextRetentionAt = 0;

  async function applyRetention(): Promise<void> {
    const now = clock.now();
    if (now < nextRetentionAt) return;
    nextRetentionAt = now + 10 * 60_000;
    await store.purge({ status: 'done', finishedBefore: now - retentionDays * DAY, what: 'payload' });
    await store.purge({ status: 'done', finishedBefore: now - Math.max(retentionDays, MIN_ID_DAYS) * DAY, what: 'entry' });
  }

  const readyStore: InboxStore = {
    ...store,
    insert: async (entry, insertOptions) => {
      const startedAt = clock.now();
      await ready();
      if (insertOptions?.timeoutMs === undefined) return store.insert(entry);
      const left = insertOptions.timeoutMs - (clock.now() - startedAt);
      // The migration took the time: the receiver has answered 503 (or is about to), so no write starts.
      if (left <= 0) throw new StoreTimeout(insertOptions.timeoutMs);
      return store.insert(entry, { timeoutMs: left });
    },
  };

  const inbox: Inbox = {
    handler: createInboxHandler({
      store: readyStore,
      secrets: deliverySecrets,
      toleranceSeconds,
      storeTimeoutMs,
      invalidPayload,
      clock,
      onStored: () => {
        for (const listener of localListeners) listener();
      },
      onError: options.onError,
    }),

    startWorker(workerOptions) {
      // Its loop would only meet the closed store, again and again, in onError.
      if (closed) throw new ConfigurationError('This inbox is closed: create a new one to start a worker.');
      const worker = startWorker(
        {
          store,
          clock,
          random,
          ready,
          retention: applyRetention,
          ...(tenants && { clientOf: (tenant: string) => tenants.client(tenant) }),
          onLocalStored: (listener) => {
            localListeners.add(listener);
            return () => localListeners.delete(listener);
          },
        },
        workerOptions,
      );
      workers.add(worker);
      return {
        async stop(stopOptions) {
          await worker.stop(stopOptions);
          workers.delete(worker);
        },
      };
    },

    async stats(filter) {
      const tenant = tenantOption(filter);
      await ready();
      // A store written before invalidPayload existed still gives every count.
      const stats = await store.stats(clock.now(), tenant === undefined ? undefined : { tenant });
      const missed = await openMisses(tenant);
      return { ...stats, invalidPayload: stats.invalidPayload ?? 0, ...(missed === undefined ? {} : { missed: missed.length }) };
    },

    async *entries(filter = {}) {
      if (typeof filter !== 'object' || filter === null) throw new InvalidInputError([{ path: 'filter', message: 'must be an object such as { status: \'dead\' }' }]);
      if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
        throw new InvalidInputError([{ path: 'status', message: `must be one of ${STATUSES.join(', ')}` }]);
      }
      const tenant = tenantOption(filter);
      await ready();
      let after: { receivedAt: number; id: string } | undefined;
      for (;;) {
        const page = await store.list({ status: filter.status, after, limit: 200, ...(tenant !== undefined && { tenant }) });
        yield* page;
        if (page.length < 200) return;
        const last = page[page.length - 1]!;
        after = { receivedAt: last.receivedAt, id: last.id };
      }
    },

    async entry(deliveryId, entryOptions) {
      const tenant = tenantOption(entryOptions);
      await ready();
      return store.get(deliveryId, tenant);
    },

    async retry(deliveryId, retryOptions) {
      if (typeof deliveryId !== 'string' || deliveryId === '') throw new InvalidInputError([{ path: 'deliveryId', message: 'a delivery id is required' }]);
      const tenant = tenantOption(retryOptions);
      await ready();
      return store.retry(deliveryId, clock.now(), tenant);
    },

    async retryDead(retryOptions) {
      const tenant = tenantOption(retryOptions);
      await ready();
      return store.retryDead(clock.now(), tenant === undefined ? undefined : { tenant });
    },

    async purge(purgeOptions) {
      const { status, olderThanDays = 0 } = purgeOptions ?? ({} as Partial<PurgeOptions>);
      if (status !== 'done' && status !== 'dead') throw new InvalidInputError([{ path: 'status', message: "must be 'done' or 'dead'" }]);
      if (!Number.isFinite(olderThanDays) || olderThanDays < 0) throw new InvalidInputError([{ path: 'olderThanDays', message: 'must be zero or more' }]);
      const tenant = tenantOption(purgeOptions);
      const mine = tenant === undefined ? {} : { tenant };
      await ready();
      const now = clock.now();
      const finishedBefore = now - olderThanDays * DAY;
      if (status === 'dead') return store.purge({ status, finishedBefore, what: 'entry', ...mine });
      // A done entry's delivery id is what makes a late retry of the service a duplicate: whatever
      // age is asked, rows younger than the id window only lose their payload.
      const idsBefore = Math.min(finishedBefore, now - MIN_ID_DAYS * DAY);
      const deleted = await store.purge({ status, finishedBefore: idsBefore, what: 'entry', ...mine });
      const emptied = finishedBefore > idsBefore ? await store.purge({ status, finishedBefore, what: 'payload', ...mine }) : 0;
      return deleted + emptied;
    },

    async close() {
      closed = true;
      unregister();
      deliverySecrets.close();
      await Promise.all([...workers].map((worker) => worker.stop()));
      await store.close();
    },

    async reconcile(reconcileOptions: ReconcileOptions | TenantsReconcileOptions) {
      await ready();
      const onStored = () => {
        for (const listener of localListeners) listener();
      };
      if (reconcileOptions !== null && typeof reconcileOptions === 'object' && 'tenants' in reconcileOptions) {
        return reconcileTenants(readyStore, reconcileOptions, { clock, onStored });
      }
      return reconcileStore(readyStore, reconcileOptions, { clock, endpointIds: options.endpointIds, onStored });
    },

    async lastReconcile(lastOptions) {
      const tenant = tenantOption(lastOptions);
      await ready();
      const last = await store.lastReconcile?.(tenant);
      if (!last) return undefined;
      return { ranAt: last.ranAt, missed: (await currentMissed(store, tenant)) ?? [] };
    },

    async missed(missedOptions = {}) {
      const limit = missedOptions.limit ?? 1000;
      if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidInputError([{ path: 'limit', message: 'must be a whole number >= 1' }]);
      const tenant = tenantOption(missedOptions);
      await ready();
      if (missedOptions.ended) return (await store.listMissed?.({ open: false, limit, ...(tenant !== undefined ? { tenant } : receiving ? {} : { tenant: '' }) })) ?? [];
      const open = (await openMisses(tenant)) ?? [];
      // A store that keeps no missed table gives the last reconcile's list: records never ended.
      return open.slice(0, limit).map((each) => ('ended' in each ? (each as MissedRecord) : { ...each, firstSeenAt: 0, ended: null }));
    },

    async acknowledgeMissed(deliveryId, ackOptions = {}) {
      const tenant = tenantOption(ackOptions);
      await ready();
      return acknowledgeMissed(store, deliveryId, ackOptions.by ?? 'inbox.acknowledgeMissed', clock.now(), tenant);
    },
  } as Inbox;

  /** The open misses: a tenant's, every tenant's (an inbox of many merchants), or the one merchant's. */
  function openMisses(tenant: string | undefined): Promise<MissedDelivery[] | undefined> {
    if (tenant !== undefined) return currentMissed(store, tenant);
    return receiving ? everyTenantsMissed(store) : currentMissed(store);
  }
  // integration-sdk/otel reports the pending and dead gauges of every open inbox.
  const unregister = registerOpenInbox({ store, inbox });
  // The dashboard reads the store's own queries (pages, buckets, the action log) through this.
  Object.defineProperty(inbox, INBOX_INTERNALS, { value: { store, ready, clock } satisfies InboxInternals });
  return inbox;
}

/** The `tenant` of a filter: a tenant id, checked as the registry checks them; `undefined` for every tenant. */
function tenantOption(filter: { tenant?: unknown } | undefined): string | undefined {
  const tenant = filter?.tenant;
  if (tenant === undefined) return undefined;
  const problem = tenantIdProblem(tenant);
  if (problem !== null) throw new InvalidInputError([{ path: 'tenant', message: problem }]);
  return tenant as string;
}

const INBOX_INTERNALS = Symbol.for('integration-sdk.inbox.internals');

/** What integration-sdk/dashboard reads of an inbox besides its public methods. */
export interface InboxInternals {
  store: InboxStore;
  /** Migrates the store once. */
  ready(): Promise<void>;
  clock: Clock;
}

/** The store, migration and clock of an inbox made by {@link createInbox}; `undefined` for anything else. */
export function inboxInternals(inbox: Inbox): InboxInternals | undefined {
  return (inbox as unknown as Record<symbol, InboxInternals | undefined>)[INBOX_INTERNALS];
}
