import { IntegrationClient } from '../client.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { InvalidInputError } from '../errors/invalid-input-error.ts';
import type { SubscribableEvent } from '../schemas/index.ts';
import type { Health } from '../schemas/health.ts';
import { TenantConnectError } from '../errors/tenant-errors.ts';
import type { TenantBudget } from './budget-seam.ts';
import type { ClientCache } from './client-cache.ts';
import { REQUIRED_SCOPES } from './records.ts';
import type { TenantAccess } from './tenant-client.ts';
import type { CreateTenantsOptions } from './types.ts';

/** What the tenants' operations share. */
export interface TenantsContext extends TenantAccess {
  budget: TenantBudget;
  clients: ClientCache;
  events: SubscribableEvent[];
  webhookUrl: (tenantId: string) => string;
  options: Pick<CreateTenantsOptions, 'baseUrl' | 'clientOptions'>;
  /** The tenant's own client (`tenants.client(id)`): its stored key, read per call; a 401 marks it `key_invalid`. */
  clientOf(tenantId: string): IntegrationClient;
}

/**
 * A client on a key given by the caller (connect, updateKey), paced by the tenant's budget. Its
 * shape is checked before anything is sent: `InvalidInputError` naming the rule, never the key.
 * `budgetLine` names its line in the budget when it is not the tenant's (an old key, whose bucket
 * is its own: the tenant's line stays on the tenant's key).
 */
export function keyClient(context: TenantsContext, tenantId: string, apiKey: unknown, budgetLine: string = tenantId): IntegrationClient {
  if (typeof apiKey !== 'string' || apiKey === '') throw new InvalidInputError([{ path: 'apiKey', message: 'is missing: pass the key the merchant created (service_<key_id>_<secret>)' }]);
  try {
    return new IntegrationClient({
      ...context.options.clientOptions,
      apiKey,
      baseUrl: context.options.baseUrl,
      rateLimit: context.budget.limiterFor(budgetLine),
      clock: context.clock,
      ...(context.logger ? { logger: context.logger } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigurationError && error.message.startsWith('apiKey ')) {
      throw new InvalidInputError([{ path: 'apiKey', message: error.message.slice('apiKey '.length) }]);
    }
    throw error;
  }
}

/** `health()` of a key, and the rule that refuses it when it lacks a scope the integration needs. */
export async function describeKey(tenantId: string, client: IntegrationClient): Promise<Health> {
  const health = await client.health();
  const missing = REQUIRED_SCOPES.filter((scope) => !health.scopes.includes(scope));
  if (missing.length > 0) {
    throw new TenantConnectError(
      tenantId,
      'missing_scopes',
      `the key lacks ${missing.join(' and ')} (webhooks:manage registers the tenant's endpoint, orders:read reconciles its orders): ask the merchant for a key with them; nothing was stored`,
      { missingScopes: [...missing] },
    );
  }
  return health;
}

/** The tenant's webhook URL, normalised as the service stores it. */
export function endpointUrl(context: TenantsContext, tenantId: string): string {
  const url = context.webhookUrl(tenantId);
  if (typeof url !== 'string' || !URL.canParse(url)) throw new ConfigurationError(`webhookUrl(${JSON.stringify(tenantId)}) must return an absolute URL`);
  return new URL(url).href;
}
