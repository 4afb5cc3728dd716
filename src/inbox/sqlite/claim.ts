/**
 * The SQLite claim (InboxStore.claim), in one BEGIN IMMEDIATE transaction: entries whose lease
 * expired first, then due entries tenant by tenant in turn (docs/inbox.md, "Fair claiming").
 *
 * Fairness without reading a backlog: the tenants with pending entries are walked in the order of
 * the index `(tenant, next_attempt_at, seq) WHERE status = 'pending'`, two index seeks per tenant
 * (the next tenant after this one; its due entries from `next_attempt_at <= now`, which finds none
 * at once when none is due), starting after the tenant the worker served last and wrapping round,
 * so the cost of a claim grows with the tenants it visits, never with how many entries one of them
 * has waiting. Of each tenant with runnable entries it takes up to `limit`, earliest first; then
 * one of each tenant in turn, then a second of each, until `limit`.
 */
import type { SqliteDatabase as Database } from '../../storage/sqlite.ts';
import type { ClaimRequest } from '../store.ts';

/** The most tenants one claim looks at: a claim stays cheap whatever else is pending; the next one goes on from there. */
export const MAX_TENANTS_VISITED = 1000;

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
const DUE_OF_TENANT = `SELECT e.seq, e.tenant FROM inbox_entries e WHERE e.status = 'pending' AND e.tenant = :tenant AND e.next_attempt_at <= :now AND ${runnable}
ORDER BY e.next_attempt_at, e.seq LIMIT :limit`;
// The first tenant with a pending entry; the one after ?1, or (?2 = 1: round once more) the first. Index seeks.
const FIRST_TENANT = `SELECT MIN(tenant) AS tenant FROM inbox_entries WHERE status = 'pending'`;
const NEXT_TENANT = `SELECT COALESCE((SELECT MIN(tenant) FROM inbox_entries WHERE status = 'pending' AND tenant > ?1), CASE WHEN ?2 THEN (${FIRST_TENANT}) END) AS tenant`;

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

/** The entries to lease, in the order taken (see the file's comment). */
export function pickClaimable(database: Database, request: ClaimRequest): Picked[] {
  const parameters = { now: request.now, orderWaitMs: request.orderWaitMs, limit: request.limit };
  const expired = database.prepare(EXPIRED).all(parameters) as Picked[];
  const wanted = request.limit - expired.length;
  if (wanted <= 0) return expired;

  const first = database.prepare(FIRST_TENANT);
  const next = database.prepare(NEXT_TENANT);
  const dueOf = database.prepare(DUE_OF_TENANT);
  const start = request.afterTenant ?? null;
  const lists: Picked[][] = [];
  // Each tenant once per claim: coming round again (the tenant served last has nothing pending, so
  // the walk never meets it) must not take a tenant's entries a second time.
  const visited = new Set<string>();
  let tenant: string | null = start;
  let wrapped = start === null;
  while (visited.size < MAX_TENANTS_VISITED && lists.length < wanted) {
    const found = (tenant === null ? first.get() : next.get(tenant, wrapped ? 0 : 1)) as { tenant: string | null };
    if (found.tenant === null || visited.has(found.tenant)) break;
    // Past the last tenant: round once more from the first, up to the one served last, which comes last.
    if (!wrapped && start !== null && found.tenant <= start) wrapped = true;
    if (wrapped && start !== null && found.tenant > start) break;
    visited.add(found.tenant);
    tenant = found.tenant;
    const due = dueOf.all({ ...parameters, tenant, limit: wanted }) as Picked[];
    if (due.length > 0) lists.push(due);
    if (wrapped && tenant === start) break;
  }
  return [...expired, ...inTurn(lists, wanted)];
}
