import { inspect } from 'node:util';
import { systemClock } from '../clock.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import { transportSettingsFrom } from '../transport/client-options.ts';
import { createTenantBudget } from './budget-seam.ts';
import { ClientCache } from './client-cache.ts';
import { connectTenant } from './connect.ts';
import type { TenantsContext } from './context.ts';
import { Credentials } from './credentials.ts';
import { disconnectTenant } from './disconnect.ts';
import { tenantFromRecord } from './records.ts';
import { attachTenantsReceiving, watchedStore } from './receiving.ts';
import { rekeyTenants } from './rekey.ts';
import { rotateTenantSecret } from './rotate.ts';
import { TENANT_STATUSES, type TenantRotationRecord, type TenantStatus, type TenantStore } from './store.ts';
import { tenantClient } from './tenant-client.ts';
import { checkTenantId } from './tenant-id.ts';
import type { CreateTenantsOptions, ListTenantsOptions, Tenant, Tenants } from './types.ts';
import { updateTenantKey } from './update-key.ts';

const LIST_PAGE = 500;
const DEFAULT_EVENTS = ['order.created', 'order.status_changed'] as const;

/** A webhook secret of a tenant, opened, for its receiver (`integration-sdk/inbox`). */
export interface TenantWebhookSecret {
  endpointId: string;
  secret: string;
  createdAt: number;
}

/** What the SDK's own modules (the inbox's receiver, the CLI's doctor) reach beyond the public API. */
export interface TenantsInternals {
  store: TenantStore;
  /**
   * The webhook secrets a tenant's deliveries may be signed with, newest first (two during a
   * rotation); `null` for an unknown, disconnecting or disconnected tenant. Read from the store at
   * each call: the receiver caches it.
   */
  secretsFor(tenantId: string): Promise<TenantWebhookSecret[] | null>;
  /** The tenant's secret rotation under way (its step and endpoints), or `null`. */
  rotationFor(tenantId: string): Promise<TenantRotationRecord | null>;
  /** The egress budget's use per minute (`doctor --tenants`). */
  egressUsage(): Promise<{ minuteStartedAt: string; requests: number }[]>;
  /** Clients held strongly right now (the idle LRU). */
  heldClients(): number;
}

const internals = new WeakMap<Tenants, TenantsInternals>();

/** The internals of a `Tenants` made by `createTenants` (`undefined` for any other object). */
export function tenantsInternals(tenants: Tenants): TenantsInternals | undefined {
  return internals.get(tenants);
}

/**
 * Many merchants, one integration: a registry of tenants (each a merchant's key and webhook secret,
 * sealed with AES-256-GCM in `store`), their clients (one egress budget shared fairly), and their
 * webhook endpoints (never an orphan). See docs/tenants.md.
 *
 * @example
 * ```ts
 * import { createTenants } from 'integration-sdk/tenants';
 * import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
 *
 * const tenants = createTenants({
 *   store: sqliteTenantStore({ path: './integration.db' }),
 *   encryptionKey: process.env.TENANTS_KEY!, // openssl rand -base64 32
 *   baseUrl: 'https://platform.example.com',
 *   webhookUrl: (id) => `https://erp.example.com/webhooks/integration/${id}`,
 * });
 * await tenants.connect('loja-42', { apiKey: pastedKey });
 * await tenants.client('loja-42').stock.set([{ external_id: 'SKU-1', store_id, stock_quantity: 3 }]);
 * ```
 */
export function createTenants(options: CreateTenantsOptions): Tenants {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('createTenants needs { store, encryptionKey, baseUrl, webhookUrl }');
  if (typeof options.store?.get !== 'function' || typeof options.store.beginConnect !== 'function') {
    throw new ConfigurationError('createTenants needs { store }: sqliteTenantStore({ path }) or postgresTenantStore({ connectionString })');
  }
  // Receivers in this process forget a tenant's cached secrets as soon as this registry changes them.
  const secretListeners = new Set<(tenantId: string) => void>();
  const store = watchedStore(options.store, (tenantId) => {
    for (const listener of secretListeners) listener(tenantId);
  });
  if (typeof options.webhookUrl !== 'function') throw new ConfigurationError('createTenants needs { webhookUrl: (tenantId) => url }: where each tenant\'s deliveries go');
  const events = [...(options.events ?? DEFAULT_EVENTS)];
  if (events.length === 0) throw new ConfigurationError('createTenants: events must name at least one event');
  const maxIdleClients = options.maxIdleClients ?? 100;
  if (!Number.isSafeInteger(maxIdleClients) || maxIdleClients < 0) throw new ConfigurationError('createTenants: maxIdleClients must be a whole number ≥ 0');
  // The client options are checked once, here, with a key that is never sent.
  transportSettingsFrom({ ...options.clientOptions, apiKey: 'service_check_unsent', baseUrl: options.baseUrl });
  const credentials = new Credentials(options.encryptionKey, store);
  const clock = options.clock ?? systemClock;
  const budget = createTenantBudget({ keyBudget: options.keyBudget, egress: options.egress, redis: options.redis, clock, logger: options.logger });
  const clients = new ClientCache(maxIdleClients, (id) => budget.release(id));
  const context: TenantsContext = {
    store,
    credentials,
    clock,
    logger: options.logger,
    budget,
    clients,
    events,
    webhookUrl: options.webhookUrl,
    options: { baseUrl: options.baseUrl, clientOptions: options.clientOptions },
    clientOf: (id) => clients.get(id, () => tenantClient(id, budget.limiterFor(id), context, context.options)),
  };
  let closed = false;
  const open = () => {
    if (closed) throw new ConfigurationError('This tenants registry is closed.');
  };
  // One change of a tenant at a time in this process: two connects of one id at once would each
  // register an endpoint. (Across processes, a rotation or key change has an owner in the store;
  // two first connects of one id at once, as two webhooks.create, are not guarded.)
  const busy = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(id: string, change: () => Promise<T>): Promise<T> => {
    const previous = busy.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(change);
    const settled = next.catch(() => {});
    busy.set(id, settled);
    void settled.then(() => {
      if (busy.get(id) === settled) busy.delete(id);
    });
    return next;
  };

  const tenants: Tenants = {
    async connect(id, input) {
      open();
      return oneAtATime(id, () => connectTenant(context, id, input));
    },
    async updateKey(id, apiKey) {
      open();
      return oneAtATime(id, () => updateTenantKey(context, id, apiKey));
    },
    async disconnect(id) {
      open();
      return oneAtATime(id, () => disconnectTenant(context, id));
    },
    async get(id) {
      open();
      checkTenantId(id);
      await credentials.ready();
      const record = await store.get(id);
      return record === null ? null : tenantFromRecord(record);
    },
    list(listOptions) {
      open();
      const statuses = statusesOf(listOptions);
      return {
        async *[Symbol.asyncIterator](): AsyncGenerator<Tenant> {
          await credentials.ready();
          let after: string | undefined;
          for (;;) {
            const page = await store.list({ statuses, after, limit: LIST_PAGE });
            for (const record of page) yield tenantFromRecord(record);
            if (page.length < LIST_PAGE) return;
            after = page.at(-1)!.id;
          }
        },
      };
    },
    client(id) {
      open();
      checkTenantId(id);
      return context.clientOf(id);
    },
    async rotateWebhookSecret(id) {
      open();
      return oneAtATime(id, () => rotateTenantSecret(context, id));
    },
    async rekey() {
      open();
      return rekeyTenants(context);
    },
    async close() {
      if (closed) return;
      closed = true;
      clients.clear();
      await budget.close();
      await store.close();
    },
  };
  Object.defineProperties(tenants, {
    [inspect.custom]: { value: () => 'Tenants { [credentials sealed] }', enumerable: false },
    toJSON: { value: () => ({ kind: 'Tenants' }), enumerable: false },
  });
  internals.set(tenants, {
    store,
    async secretsFor(tenantId) {
      await credentials.ready();
      const record = await store.get(tenantId);
      if (record === null || record.status === 'disconnected' || record.status === 'disconnecting') return null;
      return (await store.secrets(tenantId)).map((secret) => ({
        endpointId: secret.endpointId,
        secret: credentials.openSecret(tenantId, secret.endpointId, secret.secret),
        createdAt: secret.createdAt,
      }));
    },
    rotationFor: (tenantId) => store.rotation(tenantId),
    egressUsage: () => budget.usage(),
    heldClients: () => clients.held,
  });
  attachTenantsReceiving(tenants, {
    async read(tenantId) {
      await credentials.ready();
      const record = await store.get(tenantId);
      if (record === null || record.status === 'disconnected' || record.status === 'disconnecting') return null;
      const secrets = (await store.secrets(tenantId)).map((secret) => ({
        endpointId: secret.endpointId,
        secret: credentials.openSecret(tenantId, secret.endpointId, secret.secret),
        createdAt: secret.createdAt,
        verifiedAt: secret.verifiedAt ?? null,
      }));
      // A connect registers its endpoint before it stores the secret, as a rotation does.
      return { secrets, rotating: record.rotatingSince !== null || record.status === 'connecting' };
    },
    markVerified: (tenantId, endpointId, at) => store.markSecretVerified(tenantId, endpointId, at),
    changes: (after, limit) => store.secretChanges(after, limit),
    subscribe(listener) {
      secretListeners.add(listener);
      return () => secretListeners.delete(listener);
    },
  });
  return tenants;
}

function statusesOf(options: ListTenantsOptions | undefined): TenantStatus[] {
  const wanted = options?.status;
  if (wanted === undefined) return TENANT_STATUSES.filter((status) => status !== 'disconnected');
  const list = typeof wanted === 'string' ? [wanted] : [...wanted];
  const unknown = list.filter((status) => !TENANT_STATUSES.includes(status));
  if (unknown.length > 0 || list.length === 0) {
    throw new InvalidInputError([{ path: 'status', message: `must be one or more of ${TENANT_STATUSES.join(', ')}` }]);
  }
  return list;
}
