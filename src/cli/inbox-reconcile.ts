// `integration-sdk inbox reconcile`: inbox.reconcile from a scheduler. Exit 0 nothing missed, 1 some
// deliveries never arrived (listed), 2 it could not run (or could not read the delivery log).
// Prints ids, statuses and the service's error texts only: never an order's payload.
import { systemClock } from '../clock.ts';
import type { IntegrationClient } from '../index.ts';
import { currentMissed, reconcileStore, type ReconcileReport } from '../inbox/reconcile.ts';
import type { MissedDelivery } from '../inbox/store.ts';
import type { Check } from './doctor.ts';
import { UsageError } from './config.ts';
import { failure } from './failure.ts';
import { openStore, storeLocation } from './inbox-store.ts';

export interface InboxReconcileOptions {
  store?: string;
  /** Minutes; `--stale-after`. */
  staleAfter: number;
  /** `--max-reads`. */
  maxReads: number;
  json?: boolean;
}

export async function inboxReconcile(client: () => IntegrationClient, options: InboxReconcileOptions): Promise<number> {
  const location = storeLocation(options.store);
  const service = client(); // a missing key fails before the store is opened
  const store = await openStore(location);
  let report: ReconcileReport;
  try {
    report = await reconcileStore(store, { client: service, staleAfterMinutes: options.staleAfter, maxReads: options.maxReads }, { clock: systemClock });
  } catch (error) {
    // Whatever stopped it (a scope refused, the service failing), reconcile did not run to the end:
    // exit 2 for a scheduler, not the 1 that means "deliveries were missed". What it stored stays.
    throw new UsageError(`${failure(error).message} Reconcile stopped; what it recovered so far is stored, run it again.`);
  } finally {
    await store.close();
  }
  console.log(options.json ? JSON.stringify(report) : describe(report, options));
  if (report.missedUnavailable !== undefined) return 2;
  return report.missed.length > 0 ? 1 : 0;
}

function describe(report: ReconcileReport, options: InboxReconcileOptions): string {
  const lines = [
    `Read back ${report.ordersChecked} orders not heard of for ${options.staleAfter} minutes (at most ${options.maxReads} a run):`,
    `  ${report.statusChanges} status changes and ${report.createdRecovered} order.created recovered into the inbox; your workers handle them as usual (source: 'reconcile').`,
  ];
  if (report.notFound > 0) lines.push(`  ${report.notFound} orders answered 404 (deleted, or outside the key's stores).`);
  if (report.unreadable > 0) lines.push(`  ${report.unreadable} orders could not be read (an answer this SDK's order schema does not accept): they are tried again at the next run.`);
  if (report.ordersChecked === options.maxReads) lines.push('  The read budget was used up: run again (the least recently checked orders go first).');
  if (report.missedUnavailable !== undefined) {
    lines.push(`Missed deliveries not checked: ${report.missedUnavailable}.`);
    return lines.join('\n');
  }
  if (report.missed.length === 0) {
    lines.push('No missed deliveries: every dead or retrying delivery the service lists is in the inbox.');
    return lines.join('\n');
  }
  lines.push(`${report.missed.length} deliveries never reached the inbox:`);
  for (const missed of report.missed) lines.push(`  ${row(missed)}`);
  lines.push(
    'What to do: fix the receiver (see last_error); a retrying delivery still arrives until its gives-up time.',
    'A dead one is lost for good: changes of orders the inbox knows are recovered by reconcile, but an order',
    "whose every delivery died and that no later event names cannot be found (no route lists orders): look it up",
    'in the platform (integration-sdk orders get <order_id>, or orders find --external-id <id>).',
  );
  return lines.join('\n');
}

function row(missed: MissedDelivery): string {
  const givesUp = missed.givesUpAt === null ? '' : `, service gives up at ${missed.givesUpAt}`;
  return `${missed.deliveryId}  ${missed.event}  ${missed.status} after ${missed.attemptCount} attempts${givesUp}  endpoint ${missed.endpointId}  created ${missed.createdAt}  last_error: ${missed.lastError ?? '(none)'}`;
}

/** `doctor --store`: the last reconcile's deliveries that still have not reached the inbox. */
export async function reconcileCheck(location: string): Promise<Check> {
  const check = 'inbox reconcile';
  const store = await openStore(location);
  try {
    const last = await store.lastReconcile?.();
    if (!last) return { check, status: 'warn', detail: 'never run: schedule `integration-sdk inbox reconcile` (e.g. every 15 minutes) to recover what the webhooks missed' };
    const missed = (await currentMissed(store)) ?? [];
    const ran = `last run ${new Date(last.ranAt).toISOString()}`;
    if (missed.length === 0) return { check, status: 'ok', detail: `${ran}: no missed deliveries` };
    const dead = missed.filter((each) => each.status === 'dead').length;
    const some = missed.slice(0, 3).map((each) => `${each.deliveryId} (${each.event}, ${each.status})`).join(', ');
    return {
      check,
      status: 'fail',
      detail: `${ran}: ${missed.length} deliveries never reached the inbox (${dead} dead, ${missed.length - dead} retrying): ${some}${missed.length > 3 ? ', ...' : ''}; fix the receiver, then see \`integration-sdk inbox reconcile\``,
    };
  } finally {
    await store.close();
  }
}
