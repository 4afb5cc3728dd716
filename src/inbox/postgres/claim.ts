/**
 * The Postgres claim (InboxStore.claim): entries whose lease expired first, then due entries tenant
 * by tenant in turn (docs/inbox.md, "Fair claiming"), every row taken with `FOR UPDATE SKIP LOCKED`
 * so that workers in any number of processes take different rows.
 *
 * The tenants with something due are read from `inbox_due_tenants` (./due-tenants.ts), from after
 * the tenant this worker served last and round once, at most {@link MAX_TENANTS_VISITED} of them,
 * each with whether it has a runnable due entry (one index probe), while the expired leases are
 * taken: a tenant whose entries all wait for a retry is never looked at, however many there are.
 * Then, in one statement, up to `limit` runnable entries of each of the first `limit` tenants that
 * have some (earliest first) are locked, and one of each is taken in turn, then a second of each,
 * until `limit`. The last tenant looked at goes to `walkedTo`, and the tenants looked at that have
 * nothing due any more are marked so.
 */
import type { ClaimRequest, InboxRow } from '../store.ts';
import { walkSql } from './due-tenants.ts';

/** The most tenants one claim looks at; the next claim goes on from there (`walkedTo`). */
export const MAX_TENANTS_VISITED = 100;

type Query = <R>(sql: string, params?: unknown[]) => Promise<R[]>;

/** The runnable rule of InboxStore.claim for entry `e` ($1 now, $2 orderWaitMs): its order's earliest unfinished entry, none leased, its order.created there (or waited for long enough). */
const runnable = (table: string) => `(e.order_id IS NULL OR (
    NOT EXISTS (SELECT 1 FROM ${table} p WHERE p.order_id = e.order_id AND p.tenant = e.tenant AND p.seq <> e.seq
      AND ((p.status IN ('pending', 'processing') AND ((p.event = 'order.created' AND e.event <> 'order.created')
        OR ((p.event = 'order.created') = (e.event = 'order.created') AND (p.ts < e.ts OR (p.ts = e.ts AND (p.received_at < e.received_at OR (p.received_at = e.received_at AND p.seq < e.seq)))))))
        OR (p.status = 'processing' AND p.lease_until > $1)))
    AND (e.event <> 'order.status_changed' OR e.received_at + $2 <= $1
      OR EXISTS (SELECT 1 FROM ${table} c WHERE c.order_id = e.order_id AND c.tenant = e.tenant AND c.event = 'order.created'))))`;

/** A tenant looked at by a claim, and whether it has a runnable due entry. */
export interface WalkedTenant {
  tenant: string;
  runnable: boolean;
}

/** The tenants a claim looks at (see the file's comment), in the order of their turn. */
export async function walkDueTenants(query: Query, schema: string, table: string, request: ClaimRequest): Promise<WalkedTenant[]> {
  const after = request.afterTenant ?? null;
  const params: unknown[] = [request.now, request.orderWaitMs, MAX_TENANTS_VISITED];
  return query<WalkedTenant>(walkSql(schema, table, runnable(table), after === null), after === null ? params : [...params, after]);
}

/** The tenants to take entries of (the first `wanted` with a runnable one) and those looked at up to the last of them. */
export function turnsOf(walked: readonly WalkedTenant[], wanted: number): { chosen: string[]; visited: string[] } {
  const chosen: string[] = [];
  let visited = walked.length;
  for (const [index, each] of walked.entries()) {
    if (!each.runnable) continue;
    chosen.push(each.tenant);
    if (chosen.length === wanted) {
      visited = index + 1;
      break;
    }
  }
  return { chosen, visited: walked.slice(0, visited).map((each) => each.tenant) };
}

/** Leases the entries of an UPDATE ... FROM picked, returning the claimed rows with their turn. */
const lease = (table: string, columns: string) => `
  UPDATE ${table} t SET status = 'processing', lease_owner = $3, lease_until = $4, attempts = t.attempts + 1
  FROM picked WHERE t.seq = picked.seq
  RETURNING ${columns.split(', ').map((column) => `t.${column}`).join(', ')}, t.payload, picked.turn, picked.rank`;

type Claimed = InboxRow & { turn: string; rank: string };

/** Entries whose lease expired, oldest lease first ($5: how many). */
export async function claimExpired(query: Query, table: string, columns: string, request: ClaimRequest): Promise<Claimed[]> {
  return query<Claimed>(
    `WITH picked AS (
       SELECT e.seq, 0 AS turn, row_number() OVER () AS rank FROM (
         SELECT e.seq FROM ${table} e WHERE e.status = 'processing' AND e.lease_until <= $1 AND ${runnable(table)}
         ORDER BY e.lease_until, e.seq LIMIT $5 FOR UPDATE SKIP LOCKED) e)
     ${lease(table, columns)}`,
    [request.now, request.orderWaitMs, request.workerId, request.now + request.leaseMs, request.limit],
  );
}

/** Due entries of `tenants` ($5), up to `$6` of each locked, one of each in turn taken until `$6`. */
export async function claimDue(query: Query, table: string, columns: string, request: ClaimRequest, tenants: string[], wanted: number): Promise<Claimed[]> {
  if (tenants.length === 0) return [];
  return query<Claimed>(
    `WITH candidates AS (
       SELECT x.turn, c.seq, c.next_attempt_at FROM unnest($5::text[]) WITH ORDINALITY AS x(tenant, turn)
       CROSS JOIN LATERAL (
         SELECT e.seq, e.next_attempt_at FROM ${table} e
         WHERE e.status = 'pending' AND e.tenant = x.tenant AND e.next_attempt_at <= $1 AND ${runnable(table)}
         ORDER BY e.next_attempt_at, e.seq LIMIT $6 FOR UPDATE SKIP LOCKED) c),
     ranked AS (SELECT seq, turn, row_number() OVER (PARTITION BY turn ORDER BY next_attempt_at, seq) AS rank FROM candidates),
     picked AS (SELECT seq, turn, rank FROM ranked ORDER BY rank, turn LIMIT $6)
     ${lease(table, columns)}`,
    [request.now, request.orderWaitMs, request.workerId, request.now + request.leaseMs, tenants, wanted],
  );
}

/** The claimed rows in the order taken: round by round, tenant by tenant. */
export function inClaimOrder(rows: Claimed[]): InboxRow[] {
  return rows.sort((a, b) => Number(a.rank) - Number(b.rank) || Number(a.turn) - Number(b.turn)).map(({ turn: _turn, rank: _rank, ...row }) => row);
}
