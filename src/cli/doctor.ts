// `integration-sdk doctor`: one line per check, ok / warn / fail, each failure saying what to do.
// An invalid key or a disabled environment is a failed check (exit 1), never a crash.
import { AuthenticationError, ConnectionError, FeatureDisabledError, InsufficientScopeError, type Health, type IntegrationClient } from '../index.ts';
import type { Check } from './check.ts';
import { clientFrom, type ConnectionOptions } from './config.ts';
import { storeChecks } from './doctor-store.ts';
import { connectionReason } from './failure.ts';
import { storeLocation } from './inbox-store.ts';

export type { Check, CheckStatus } from './check.ts';

/** Which features each scope enables, to name what a missing scope disables. */
const FEATURES: Record<string, string> = {
  'catalog:write': 'catalog push (products)',
  'stock:write': 'stock push (stock and prices)',
  'orders:read': 'orders get / find and reading orders back from webhooks',
  'webhooks:manage': 'webhooks list / create / test / deliveries / delete',
  'loyalty:read': 'loyalty balance and statement',
  'loyalty:write': 'loyalty credit, debit and coupons',
};

/** Deliveries doctor reads per endpoint, newest first. */
const DELIVERIES_READ = 20;

/** "1 dead delivery", "2 dead deliveries". */
export function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

const WARN_SKEW_S = 60;
const FAIL_SKEW_S = 240;

function clockCheck(health: Health, now: number): Check {
  const skew = Math.round((now - Date.parse(health.ts)) / 1000);
  const abs = Math.abs(skew);
  const detail = `local clock ${skew >= 0 ? 'ahead of' : 'behind'} the service by ${abs} s`;
  if (!Number.isFinite(skew)) return { check: 'clock', status: 'warn', detail: `the service's ts "${health.ts}" is not a date` };
  if (abs > FAIL_SKEW_S) return { check: 'clock', status: 'fail', detail: `${detail}: webhook signatures are checked within 5 minutes; sync the clock (NTP)` };
  if (abs > WARN_SKEW_S) return { check: 'clock', status: 'warn', detail: `${detail}: sync the clock (NTP) before it reaches 240 s` };
  return { check: 'clock', status: 'ok', detail };
}

async function webhookChecks(client: IntegrationClient): Promise<Check[]> {
  const checks: Check[] = [];
  const endpoints = await client.webhooks.list();
  if (endpoints.length === 0) return [{ check: 'webhooks', status: 'warn', detail: 'no endpoint registered: orders will not reach the ERP; run `integration-sdk webhooks create`' }];
  for (const endpoint of endpoints) {
    const name = `webhook ${endpoint.id}`;
    const missing = ['order.created', 'order.status_changed'].filter((e) => !endpoint.events.includes(e));
    checks.push(
      missing.length > 0
        ? { check: name, status: 'warn', detail: `${endpoint.url} does not subscribe to ${missing.join(', ')}: recreate it with those events` }
        : { check: name, status: 'ok', detail: `${endpoint.url} subscribes to order.created and order.status_changed` },
    );
    const deliveries = await client.webhooks.deliveries(endpoint.id, { limit: DELIVERIES_READ });
    const dead = deliveries.filter((d) => d.status === 'dead');
    const failures = endpoint.consecutive_failures;
    const latest = deliveries[0];
    const latestText = latest ? `latest delivery ${latest.status} (${latest.event}, ${latest.created_at})` : 'no deliveries yet';
    const failuresText = count(failures, 'consecutive failure', 'consecutive failures');
    if (dead.length > 0) {
      const errors = [...new Set(dead.map((d) => d.last_error ?? 'no error recorded'))].slice(0, 3).join('; ');
      const among = deliveries.length >= DELIVERIES_READ ? ` among the latest ${DELIVERIES_READ}` : '';
      // The delivery log carries no payload, so doctor cannot name the orders those deliveries held.
      checks.push({
        check: `${name} deliveries`,
        status: 'fail',
        detail: `${count(dead.length, 'dead delivery', 'dead deliveries')}${among}, ${failuresText} (last_error: ${errors}); fix the receiver at ${endpoint.url}, then run \`integration-sdk inbox reconcile\` to fetch the orders they carried — ${latestText}`,
      });
    } else if (failures > 0) {
      checks.push({ check: `${name} deliveries`, status: 'warn', detail: `${failuresText}: check the receiver at ${endpoint.url} — ${latestText}` });
    } else {
      checks.push({ check: `${name} deliveries`, status: 'ok', detail: `${failuresText}, ${latestText}` });
    }
  }
  return checks;
}

/** Runs every check; never throws for a failed check, only for bad arguments (UsageError). */
export async function runDoctor(options: ConnectionOptions & { store?: string }): Promise<Check[]> {
  const checks: Check[] = [];
  // A store this Node cannot open (a SQLite file before Node 22.13) is the store's failed check, after the others.
  const storeArg = options.store ?? process.env.INTEGRATION_INBOX_STORE;
  let client: IntegrationClient;
  try {
    client = clientFrom(options);
  } catch (error) {
    checks.push({ check: 'key', status: 'fail', detail: (error as Error).message });
    if (storeArg) checks.push(...(await storeChecks(storeLocation(storeArg))));
    return checks;
  }
  let health: Health | undefined;
  try {
    health = await client.health({ maxRetries: 1 });
    checks.push({ check: 'key', status: 'ok', detail: `accepted for merchant ${health.merchant_id}; environment ${health.status}` });
  } catch (error) {
    if (error instanceof AuthenticationError) checks.push({ check: 'key', status: 'fail', detail: 'the service rejected the key (401): create a new credential and set INTEGRATION_API_KEY' });
    else if (error instanceof FeatureDisabledError) checks.push({ check: 'environment', status: 'fail', detail: 'the integration is disabled for this merchant (FEATURE_DISABLED): ask the platform to enable it' });
    else if (error instanceof ConnectionError) checks.push({ check: 'service', status: 'fail', detail: `cannot reach the service (${error.name === 'TimeoutError' ? 'no answer in time' : connectionReason(error)}): check INTEGRATION_BASE_URL and the network` });
    else checks.push({ check: 'service', status: 'fail', detail: `health failed (${(error as Error).name}: ${(error as Error).message}): check that INTEGRATION_BASE_URL is the Integration API, then try again` });
  }
  if (health) {
    const missing = Object.keys(FEATURES).filter((scope) => !health.scopes.includes(scope));
    checks.push(
      missing.length === 0
        ? { check: 'scopes', status: 'ok', detail: `all granted: ${health.scopes.join(' ')}` }
        : { check: 'scopes', status: 'warn', detail: `missing ${missing.map((s) => `${s} (disables ${FEATURES[s]})`).join('; ')}` },
    );
    checks.push({ check: 'stores', status: 'ok', detail: health.store_ids.length === 0 ? 'the key may write all stores' : `the key may write stores ${health.store_ids.join(', ')}` });
    checks.push(clockCheck(health, Date.now()));
    if (health.scopes.includes('webhooks:manage')) {
      try {
        checks.push(...(await webhookChecks(client)));
      } catch (error) {
        const detail = error instanceof InsufficientScopeError
          ? 'the key lacks webhooks:manage: grant it to the key to check the endpoints'
          : `cannot list the endpoints (${(error as Error).name}: ${(error as Error).message}): try again, or run \`integration-sdk webhooks list\``;
        checks.push({ check: 'webhooks', status: 'fail', detail });
      }
    } else {
      checks.push({ check: 'webhooks', status: 'warn', detail: 'not checked: the key lacks webhooks:manage' });
    }
  }
  if (storeArg) checks.push(...(await storeChecks(storeLocation(storeArg))));
  return checks;
}

/** Words of `text` in lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  return [...lines, line];
}

/**
 * One check a line: status, check, detail. With `width` (a terminal's columns) the detail is wrapped
 * under itself; when the check names leave it less than 40 columns, it goes on the lines below the
 * check, indented. Without, one line each (logs, pipes).
 */
export function formatChecks(checks: readonly Check[], width?: number): string {
  const name = Math.max(...checks.map((c) => c.check.length));
  if (width === undefined) return checks.map((c) => `${c.status.padEnd(4)}  ${c.check.padEnd(name)}  ${c.detail}`).join('\n');
  const beside = 6 + name + 2;
  const below = width - 1 - beside < 40;
  const indent = below ? 6 : beside;
  return checks
    .map((c) => {
      const lines = wrap(c.detail, Math.max(20, width - 1 - indent));
      const rest = lines.slice(below ? 0 : 1).map((l) => `${' '.repeat(indent)}${l}`);
      const head = below ? `${c.status.padEnd(4)}  ${c.check}` : `${c.status.padEnd(4)}  ${c.check.padEnd(name)}  ${lines[0]}`;
      return [head, ...rest].join('\n');
    })
    .join('\n');
}
