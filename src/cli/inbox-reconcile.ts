// `integration-sdk inbox reconcile`: inbox.reconcile from a scheduler. Exit 0 nothing new and nothing
// open, 1 it found misses it had not reported before or misses remain open (listed, with what to
// do), 2 it could not run (or could not read the delivery log). `--ack <id|all>` acknowledges open
// misses instead. Prints ids, statuses and the service's error texts only: never an order's payload.
import { userInfo } from 'node:os';
import { systemClock } from '../clock.ts';
import type { IntegrationClient } from '../index.ts';
import { acknowledgeMissed, currentMissed } from '../inbox/missed.ts';
import { reconcileStore, type ReconcileReport } from '../inbox/reconcile.ts';
import type { MissedDelivery } from '../inbox/store.ts';
import { UsageError } from './config.ts';
import { failure } from './failure.ts';
import { openStore, storeLocation } from './inbox-store.ts';

export interface InboxReconcileOptions {
  store?: string;
  /** Minutes; `--stale-after`. */
  staleAfter: number;
  /** `--max-reads`. */
  maxReads: number;
  /** `--endpoint`: this inbox's endpoint ids, comma-separated. */
  endpoint?: string;
  /** `--ack`: a missed delivery's id, or `all`. */
  ack?: string;
  json?: boolean;
}

export async function inboxReconcile(client: () => IntegrationClient, options: InboxReconcileOptions): Promise<number> {
  const location = storeLocation(options.store);
  if (options.ack !== undefined) return acknowledge(location, options.ack, options.json);
  const endpointIds = endpointIdsOf(options.endpoint);
  const service = client(); // a missing key fails before the store is opened
  const store = await openStore(location);
  let report: ReconcileReport;
  try {
    report = await reconcileStore(store, { client: service, staleAfterMinutes: options.staleAfter, maxReads: options.maxReads, endpointIds }, { clock: systemClock });
  } catch (error) {
    // Whatever stopped it (a scope refused, the service failing), reconcile did not run to the end:
    // exit 2 for a scheduler, not the 1 that means "deliveries were missed". What it stored stays.
    throw new UsageError(`${failure(error).message} Reconcile stopped; what it recovered so far is stored, run it again.`);
  } finally {
    await store.close();
  }
  console.log(options.json ? JSON.stringify(report) : describe(report, options));
  if (report.missedUnavailable !== undefined) return 2;
  return report.missed.length > 0 || report.newMissed.length > 0 ? 1 : 0;
}

function endpointIdsOf(option: string | undefined): string[] | undefined {
  if (option === undefined) return undefined;
  const ids = option.split(',').map((id) => id.trim()).filter((id) => id !== '');
  if (ids.length === 0) throw new UsageError('--endpoint needs the ids of the webhook endpoints that deliver to this inbox, comma-separated (see integration-sdk webhooks list).');
  return ids;
}

/** Who acknowledges from this command line, as the record keeps it. */
function operator(): string {
  try {
    return `${userInfo().username} (command line)`;
  } catch {
    return 'command line';
  }
}

async function acknowledge(location: string, target: string, json: boolean | undefined): Promise<number> {
  const store = await openStore(location);
  try {
    const by = operator();
    const at = Date.now();
    const acknowledged = await acknowledgeMissed(store, target, by, at);
    const open = (await currentMissed(store)) ?? [];
    if (json) console.log(JSON.stringify({ acknowledged, by, at: new Date(at).toISOString(), open: open.length }));
    else if (acknowledged === 0) console.log(`No open missed delivery ${target === 'all' ? 'to acknowledge' : `with the id ${target}`}: run integration-sdk inbox reconcile to list the open ones.`);
    else console.log(`Acknowledged ${acknowledged} missed ${acknowledged === 1 ? 'delivery' : 'deliveries'} (by ${by}, at ${new Date(at).toISOString()}); ${open.length} still open.`);
    return acknowledged > 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}

function describe(report: ReconcileReport, options: InboxReconcileOptions): string {
  const lines = [
    `Read back ${report.ordersChecked} orders (not heard of for ${options.staleAfter} minutes, or not read since a missed status change; at most ${options.maxReads} a run):`,
    `  ${report.statusChanges} status changes and ${report.createdRecovered} order.created recovered into the inbox; your workers handle them as usual (source: 'reconcile').`,
  ];
  if (report.notFound > 0) lines.push(`  ${report.notFound} orders answered 404 (deleted, or outside the key's stores).`);
  if (report.unreadable > 0) lines.push(`  ${report.unreadable} orders could not be read (an answer this SDK's order schema does not accept): they are tried again at the next run.`);
  if (report.ordersChecked === options.maxReads) lines.push('  The read budget was used up: run again (the least recently checked orders go first).');
  if (report.missedUnavailable !== undefined) {
    lines.push(`Missed deliveries not checked: ${report.missedUnavailable}.`);
    return lines.join('\n');
  }
  lines.push(`Counted the deliveries of ${report.endpointIds.length === 0 ? 'no endpoint' : `endpoint ${report.endpointIds.join(', ')}`}${report.endpointsGuessed ? ' (guessed: --endpoint names them)' : ''}.`);
  for (const other of report.otherEndpoints) {
    lines.push(`  Not this inbox's, not counted: endpoint ${other.id} ${other.url} (${other.consecutiveFailures} consecutive failures).`);
  }
  if (report.recovered.length > 0) lines.push(`${report.recovered.length} missed status changes recovered by reading every order back: ${report.recovered.map((each) => each.deliveryId).join(', ')}.`);
  if (report.missed.length === 0) {
    lines.push(report.newMissed.length === 0 ? 'No missed deliveries open.' : `No missed deliveries open (${report.newMissed.length} found this run, all recovered).`);
  } else {
    lines.push(`${report.missed.length} missed deliveries open (${report.newMissed.length} found this run):`);
    for (const missed of report.missed) lines.push(`  ${row(missed)}`);
  }
  lines.push(...report.advice.map((advice) => `What to do: ${advice}`));
  return lines.join('\n');
}

function row(missed: MissedDelivery): string {
  const givesUp = missed.givesUpAt === null ? '' : `, service gives up at ${missed.givesUpAt}`;
  return `${missed.deliveryId}  ${missed.event}  ${missed.status} after ${missed.attemptCount} attempts${givesUp}  endpoint ${missed.endpointId}  created ${missed.createdAt}  last_error: ${missed.lastError ?? '(none)'}`;
}
