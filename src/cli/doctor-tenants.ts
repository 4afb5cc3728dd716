// `doctor --tenants <location>`: the multi-merchant checks. Counts by status; each key_invalid
// tenant by id with when (a failure: its calls stop until update-key); connects and disconnects that
// did not finish; the endpoints of active tenants (at most --max-tenants, through their clients and
// the egress budget) that are missing or failing; the egress budget's use over the last minutes, read
// from the Redis the processes share (`--redis` or INTEGRATION_REDIS_URL): without it, each process
// counts only its own requests, and doctor says so rather than show its own few as the budget's use.
import { tenantsInternals } from '../tenants/create-tenants.ts';
import type { Tenants } from '../tenants/index.ts';
import type { Check } from './doctor.ts';
import { tenantsFailure } from './tenants-commands.ts';
import { redisUrl } from './redis-url.ts';
import { openTenants, type TenantsCommandOptions } from './tenants-config.ts';

/** Active tenants whose endpoints doctor reads (one `webhooks.list` each). */
export const DEFAULT_ENDPOINT_CHECKS = 20;

export async function tenantsChecks(options: TenantsCommandOptions & { maxTenants?: number }): Promise<Check[]> {
  let tenants: Tenants | undefined;
  try {
    tenants = await openTenants(options);
    return await checksOf(tenants, options.maxTenants ?? DEFAULT_ENDPOINT_CHECKS, redisUrl(options.redis) !== undefined);
  } catch (error) {
    return [{ check: 'tenants', status: 'fail', detail: tenantsFailure(error).message }];
  } finally {
    await tenants?.close().catch(() => {});
  }
}

async function checksOf(tenants: Tenants, maxTenants: number, sharedBudget: boolean): Promise<Check[]> {
  const internals = tenantsInternals(tenants)!;
  const counts = await internals.store.countByStatus();
  const checks: Check[] = [];
  const summary = Object.entries(counts).map(([status, n]) => `${n} ${status}`).join(', ') || 'none';
  checks.push({ check: 'tenants', status: 'ok', detail: `${summary}` });
  const unfinished: string[] = [];
  const active: string[] = [];
  for await (const tenant of tenants.list()) {
    if (tenant.status === 'key_invalid') {
      checks.push({ check: `tenant ${tenant.id}`, status: 'fail', detail: `key refused (401) at ${tenant.keyInvalidAt}: nothing is sent for this merchant until integration-sdk tenants update-key ${tenant.id}` });
    } else if (tenant.status === 'connecting' || tenant.status === 'disconnecting') {
      unfinished.push(`${tenant.id} (${tenant.status})`);
    } else if (tenant.status === 'active') {
      active.push(tenant.id);
    }
  }
  if (unfinished.length > 0) {
    checks.push({ check: 'tenants unfinished', status: 'warn', detail: `${unfinished.join(', ')}: run tenants connect (or disconnect) for each again to complete it` });
  }
  const checked = active.slice(0, maxTenants);
  for (const id of checked) checks.push(await endpointCheck(tenants, id));
  if (active.length > checked.length) checks.push({ check: 'endpoints', status: 'ok', detail: `checked the first ${checked.length} of ${active.length} active tenants (--max-tenants for more)` });
  checks.push(await egressCheck(internals, sharedBudget));
  return checks;
}

/** The egress budget's use by every process sharing it, which only the shared Redis knows. */
async function egressCheck(internals: NonNullable<ReturnType<typeof tenantsInternals>>, sharedBudget: boolean): Promise<Check> {
  if (!sharedBudget) {
    return {
      check: 'egress budget',
      status: 'ok',
      detail: "use not shown: without Redis each process counts only its own requests; pass --redis <url> (or set INTEGRATION_REDIS_URL) to the Redis the tenants' processes share",
    };
  }
  const usage = (await internals.egressUsage()).slice(-5);
  return { check: 'egress budget', status: 'ok', detail: `every process on the shared Redis, last minutes: ${usage.map((minute) => `${minute.minuteStartedAt.slice(11, 16)} ${minute.requests}/min`).join(', ')}` };
}

async function endpointCheck(tenants: Tenants, id: string): Promise<Check> {
  const tenant = await tenants.get(id);
  const name = `tenant ${id} endpoint`;
  try {
    const endpoints = await tenants.client(id).webhooks.list();
    const endpoint = endpoints.find((candidate) => candidate.id === tenant?.endpointId);
    if (!endpoint) return { check: name, status: 'fail', detail: `its endpoint ${tenant?.endpointId ?? ''} is gone at the service: run integration-sdk tenants connect ${id} again` };
    if (endpoint.consecutive_failures > 0) {
      return { check: name, status: 'warn', detail: `${endpoint.id} failing: ${endpoint.consecutive_failures} consecutive failure(s); check the receiver, then integration-sdk webhooks deliveries` };
    }
    return { check: name, status: 'ok', detail: `${endpoint.id} delivering` };
  } catch (error) {
    return { check: name, status: 'fail', detail: tenantsFailure(error).message };
  }
}

/**
 * `doctor`'s checks with `--tenants` (or INTEGRATION_TENANTS): the tenants' checks after the single
 * key's, which are left out when no single key is given (a multi-merchant setup has none).
 */
export async function doctorChecks(
  options: TenantsCommandOptions & { store?: string; maxTenants?: number },
  single: (options: TenantsCommandOptions & { store?: string }) => Promise<Check[]>,
): Promise<Check[]> {
  const location = options.tenants ?? process.env.INTEGRATION_TENANTS;
  if (!location) return single(options);
  const hasKey = options.apiKeyFile !== undefined || Boolean(process.env.INTEGRATION_API_KEY?.trim());
  return [...(hasKey ? await single(options) : []), ...(await tenantsChecks({ ...options, tenants: location }))];
}
