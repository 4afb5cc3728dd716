// `integration-sdk inbox reconcile --tenants <location>`: `inbox.reconcile({ tenants })` from a
// scheduler, for an inbox of many merchants: every active tenant of the registry, each through its
// own key, within one `--max-reads` budget. Exit codes as for one merchant: 0 nothing new and
// nothing open, 1 a tenant has misses not reported before or still open, 2 it could not run, or a
// tenant's reconcile could not (its key refused, the service failing: listed; the others went on).
// Prints ids, statuses and the service's error texts only: never an order's payload.
import { systemClock } from '../clock.ts';
import { reconcileTenants, type TenantsReconcileReport } from '../inbox/reconcile-tenants.ts';
import type { ConnectionOptions } from './config.ts';
import { openStore, storeLocation } from './inbox-store.ts';
import { openTenants } from './tenants-config.ts';

export interface InboxReconcileTenantsOptions extends ConnectionOptions {
  store?: string;
  /** `--tenants`: the registry's store. */
  tenants: string;
  staleAfter: number;
  maxReads: number;
  json?: boolean;
}

export async function inboxReconcileTenants(options: InboxReconcileTenantsOptions): Promise<number> {
  const tenants = await openTenants({ ...options, tenants: options.tenants });
  try {
    const store = await openStore(storeLocation(options.store));
    let report: TenantsReconcileReport;
    try {
      report = await reconcileTenants(store, { tenants, staleAfterMinutes: options.staleAfter, maxReads: options.maxReads }, { clock: systemClock });
    } finally {
      await store.close();
    }
    console.log(options.json ? JSON.stringify(report) : describe(report));
    if (report.failed.length > 0 || report.tenants.some((each) => each.missedUnavailable !== undefined)) return 2;
    return report.tenants.some((each) => each.missed.length > 0 || each.newMissed.length > 0) ? 1 : 0;
  } finally {
    await tenants.close();
  }
}

function describe(report: TenantsReconcileReport): string {
  const lines = [`Reconciled ${report.tenants.length} tenants (${report.reads} requests)${report.notReached > 0 ? `; ${report.notReached} left for the next run (the budget ran out: they go first then)` : ''}:`];
  for (const each of report.tenants) {
    const found = each.missedUnavailable === undefined ? `${each.missed.length} missed open (${each.newMissed.length} found this run)` : `missed deliveries not checked: ${each.missedUnavailable}`;
    lines.push(`  ${each.tenant}: read back ${each.ordersChecked} orders, ${each.statusChanges} status changes and ${each.createdRecovered} order.created recovered; ${found}.`);
  }
  for (const each of report.failed) lines.push(`  ${each.tenant}: could not be reconciled (${each.error}); the others went on, it is tried again at its next turn.`);
  if (report.missed.length > 0) {
    lines.push(`${report.missed.length} missed deliveries open:`);
    for (const missed of report.missed) lines.push(`  ${missed.tenant}  ${missed.deliveryId}  ${missed.event}  ${missed.status} after ${missed.attemptCount} attempts  endpoint ${missed.endpointId}  created ${missed.createdAt}  last_error: ${missed.lastError ?? '(none)'}`);
    lines.push('What to do: look for each in its merchant\'s platform dashboard (an order.created the inbox never heard of), then acknowledge each one dealt with: integration-sdk inbox reconcile --ack <delivery_id>.');
  } else lines.push('No missed deliveries open.');
  return lines.join('\n');
}
