/**
 * The SQLite claim (InboxStore.claim), in one BEGIN IMMEDIATE transaction: entries whose lease
 * expired first, then due entries tenant by tenant in turn (docs/inbox.md, "Fair claiming").
 *
 * The claim runs synchronously, holding the file's write lock, in a process that may be receiving
 * too: its work is kept small and bounded. The tenants with something due are read from
 * `inbox_due_tenants` (./due-tenants.ts), in tenant order after the tenant the worker served last
 * and round from the first, so a tenant whose entries all wait for a retry is never looked at,
 * however many there are. Of each tenant looked at, its runnable due entries are read through the
 * index `(tenant, next_attempt_at, seq) WHERE status = 'pending'`, earliest first, up to the free
 * slots; the walk stops once as many tenants as free slots have some, or after
 * {@link MAX_TENANTS_VISITED} tenants (those whose due entries cannot run yet, waiting for an
 * earlier event of their order, cost a look), and says where it got to (`walkedTo`) so that the next
 * claim goes on from there. One of each tenant is taken in turn, then a second of each, until the
 * limit. Then the tenants looked at that have nothing due any more are marked so.
 */
import type { SqliteDatabase as Database } from '../../storage/sqlite.ts';
import type { ClaimRequest, InboxRow } from '../store.ts';
import { DUE_AFTER, DUE_FROM_FIRST, DUE_UP_TO, refreshDueTenants } from './due-tenants.ts';

/** The most tenants one claim looks at: a claim stays cheap whatever else is pending; the next one goes on from there. */
export const MAX_TENANTS_VISITED = 100;

// The runnable rule of InboxStore.claim, in SQL (:now, :orderWaitMs, :limit, and :tenant for the due
// ones): the earliest unfinished entry of its order (of its tenant), none of the order leased, and
// an order.status_changed waits for its order.created up to orderWaitMs.
const runnable = `(e.order_id IS NULL OR (
    NOT EXISTS (SELECT 1 FROM inbox_entries p WHERE p.order_id = e.order_id AND p.tenant = e.tenant AND p.seq <> e.seq
      AND ((p.status IN ('pending', 'processing') AND ((p.event = 'order.created' AND e.event <> 'order.created')
        OR ((p.event = 'order.created') = (e.event = 'order.created') AND (p.ts < e.ts OR (p.ts = e.ts AND (p.received_at < e.received_at OR (p.received_at = e.received_at AND p.seq < e.seq)))))))
        OR (p.status = 'processing' AND p.lease_until > :now)))
    AND (e.event <> 'order.status_changed' OR e.received_at + :orderWaitMs <= :now
      OR EXISTS (SELECT 1 FROM inbox_entries c WHERE c.order_id = e.order_id AND c.tenant = e.tenant AND c.event = 'order.created'))))`;

const EXPIRED = `SELECT e.seq, e.tenant FROM inbox_entries e WHERE e.status = 'processing' AND e.lease_until <= :now AND ${runnable}
ORDER BY e.lease_until, e.seq LIMIT :limit`;
// The tenant's index named: given the runnable rule, the planner takes the (status, next_attempt_at)
// index instead and reads every tenant's due entries to find this one's (3 ms at 20,000).
const DUE_OF_TENANT = `SELECT e.seq, e.tenant FROM inbox_entries e INDEXED BY inbox_entries_tenant_due WHERE e.status = 'pending' AND e.tenant = :tenant AND e.next_attempt_at <= :now AND ${runnable}
ORDER BY e.next_attempt_at, e.seq LIMIT :limit`;

type Picked = { seq: number; tenant: string };

/** One of each list in turn, then a second of each, and so on: at most `limit`. */
export function inTurn<T>(lists: readonly T[][], limit: number): T[] {
  const taken: T[] = [];
  for (let round = 0; taken.length < limit; round += 1) {
    let any = false;
    for (const list of lists) {
      if (round >= list.length) continue;
      any = true;
      taken.push(list[round]!);
      if (taken.length === limit) break;
    }
    if (!any) break;
  }
  return taken;
}

/** The tenants with something due, in the order of their turn: after `start`, then round from the first up to it (which comes last). */
function dueTenants(database: Database, start: string | null, now: number): string[] {
  const read = (sql: string, parameters: Record<string, unknown>) => (database.prepare(sql).all({ now, ...parameters }) as { tenant: string }[]).map((row) => row.tenant);
  if (start === null) return read(DUE_FROM_FIRST, { limit: MAX_TENANTS_VISITED });
  const after = read(DUE_AFTER, { after: start, limit: MAX_TENANTS_VISITED });
  if (after.length === MAX_TENANTS_VISITED) return after;
  return after.concat(read(DUE_UP_TO, { upTo: start, limit: MAX_TENANTS_VISITED - after.length }));
}

/** The entries to lease, in the order taken, and the tenants looked at (see the file's comment). */
export function pickClaimable(database: Database, request: ClaimRequest): { picked: Picked[]; visited: string[] } {
  const parameters = { now: request.now, orderWaitMs: request.orderWaitMs, limit: request.limit };
  const expired = database.prepare(EXPIRED).all(parameters) as Picked[];
  const wanted = request.limit - expired.length;
  if (wanted <= 0) return { picked: expired, visited: [] };

  const dueOf = database.prepare(DUE_OF_TENANT);
  const lists: Picked[][] = [];
  const visited: string[] = [];
  for (const tenant of dueTenants(database, request.afterTenant ?? null, request.now)) {
    visited.push(tenant);
    const due = dueOf.all({ ...parameters, tenant, limit: wanted }) as Picked[];
    if (due.length > 0) lists.push(due);
    if (lists.length === wanted) break;
  }
  return { picked: [...expired, ...inTurn(lists, wanted)], visited };
}

/**
 * Leases the claimable entries to the worker (inside the caller's transaction): their rows (with
 * `columns`) in the order taken, and the last tenant looked at, for `request.walkedTo`.
 */
export function claimEntries(database: Database, request: ClaimRequest, columns: string): { rows: InboxRow[]; walkedTo: string | undefined } {
  const { picked, visited } = pickClaimable(database, request);
  const lease = database.prepare(`UPDATE inbox_entries SET status = 'processing', lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE seq = ? RETURNING ${columns}`);
  const rows = picked.map(({ seq }) => lease.get(request.workerId, request.now + request.leaseMs, seq) as InboxRow);
  refreshDueTenants(database, visited, request.now);
  return { rows, walkedTo: visited.at(-1) };
}
