// `doctor --store`: the inbox judged by the rules of the dashboard's banner (src/inbox/health.ts),
// and the missed deliveries reconciles left open: the single merchant's and, on an inbox of many
// merchants, every tenant's (`reconcile({ tenants })`, `inbox reconcile --tenants`).
import { inboxAttention, type InboxAttention } from '../inbox/health.ts';
import { currentMissed, everyTenantsMissed } from '../inbox/missed.ts';
import type { InboxStats, InboxStore, MissedDelivery, ReconcileRecord } from '../inbox/store.ts';
import type { Check, CheckStatus } from './check.ts';
import { UsageError } from './config.ts';
import { storeFailure } from './failure.ts';
import { openStore } from './inbox-store.ts';
import { duration } from './sandbox-format.ts';

/** The `inbox` and `inbox reconcile` checks of the store at `location`; a store that cannot be read is a failed `inbox` check. */
export async function storeChecks(location: string): Promise<Check[]> {
  let store: InboxStore;
  try {
    store = await openStore(location);
  } catch (error) {
    return [storeFailed(error)];
  }
  try {
    const now = Date.now();
    const stats = await store.stats(now);
    const workers = await store.workers?.();
    const { last, missed } = await openMisses(store);
    const attention = inboxAttention({ stats, workers, missed, now });
    return [inboxCheck(stats, attention.filter((item) => item.kind !== 'missed')), reconcileCheck(last, missed ?? [])];
  } catch (error) {
    return [storeFailed(error)];
  } finally {
    await store.close();
  }
}

/**
 * Every open miss of the store, the single merchant's and each tenant's, and the latest reconcile
 * that ran among theirs (the single merchant's, else that of a tenant with misses open).
 */
async function openMisses(store: InboxStore): Promise<{ last: ReconcileRecord | undefined; missed: MissedDelivery[] | undefined }> {
  const single = await currentMissed(store);
  const tenants = (await everyTenantsMissed(store)) ?? [];
  const missed = single === undefined && tenants.length === 0 ? undefined : [...(single ?? []), ...tenants];
  let last = await store.lastReconcile?.();
  for (const tenant of new Set(tenants.map((each) => each.tenant!))) {
    const ran = await store.lastReconcile?.(tenant);
    if (ran && (!last || ran.ranAt > last.ranAt)) last = ran;
  }
  return { last, missed };
}

function storeFailed(error: unknown): Check {
  // A UsageError (UnsupportedNode included: a SQLite file on a Node without node:sqlite) says what to do in its message.
  const detail = error instanceof UsageError ? error.message : (storeFailure(error) ?? `cannot read the inbox (${(error as Error).name}: ${(error as Error).message}): check --store or INTEGRATION_INBOX_STORE`);
  return { check: 'inbox', status: 'fail', detail };
}

function worst(items: readonly InboxAttention[]): CheckStatus {
  if (items.some((item) => item.severity === 'fail')) return 'fail';
  return items.length > 0 ? 'warn' : 'ok';
}

function inboxCheck(stats: InboxStats, items: readonly InboxAttention[]): Check {
  const oldest = stats.pending + stats.processing > 0 ? ` (oldest ${duration(stats.oldestPendingAgeMs)})` : '';
  const counts = `${stats.pending} pending${oldest}, ${stats.processing} processing, ${stats.dead} dead`;
  const findings = items.map((item) => {
    switch (item.kind) {
      case 'no-worker':
        return `no worker is running: ${item.noWorker.waiting} ${item.noWorker.waiting === 1 ? 'entry waits' : 'entries wait'}, the oldest for ${duration(item.noWorker.oldestPendingAgeMs)}${item.noWorker.lastClaimAt === null ? '' : ` (last claim ${duration(Date.now() - item.noWorker.lastClaimAt)} ago)`}; start the process that calls inbox.startWorker(), or read its logs`;
      case 'dead':
        return `${item.dead} dead: see \`integration-sdk inbox dead\`, fix the handler or the ERP, then \`inbox retry-dead\``;
      case 'pending-old':
        return `pending work is ${duration(item.oldestPendingAgeMs)} old while a worker runs: workers are behind, or an earlier event of the same order keeps failing (see the pending entries' last error)`;
      default:
        return '';
    }
  });
  return { check: 'inbox', status: worst(items), detail: findings.length === 0 ? counts : `${findings.join('; ')} — ${counts}` };
}

function reconcileCheck(last: ReconcileRecord | undefined, missed: readonly MissedDelivery[]): Check {
  const check = 'inbox reconcile';
  if (!last) return { check, status: 'warn', detail: 'never run: schedule `integration-sdk inbox reconcile` (e.g. every 15 minutes) to recover what the webhooks missed' };
  const ran = `last run ${new Date(last.ranAt).toISOString()}`;
  if (missed.length === 0) return { check, status: 'ok', detail: `${ran}: no missed deliveries open` };
  const dead = missed.filter((each) => each.status === 'dead').length;
  const some = missed.slice(0, 3).map((each) => `${each.deliveryId} (${'tenant' in each ? `tenant ${String(each.tenant)}, ` : ''}${each.event}, ${each.status})`).join(', ');
  return {
    check,
    status: 'fail',
    detail: `${ran}: ${missed.length} missed ${missed.length === 1 ? 'delivery' : 'deliveries'} open (${dead} dead, ${missed.length - dead} retrying): ${some}${missed.length > 3 ? ', ...' : ''}; run \`integration-sdk inbox reconcile\` for what to do, then acknowledge each one dealt with (--ack <delivery_id>)`,
  };
}
