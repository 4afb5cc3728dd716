/**
 * The Postgres claim (InboxStore.claim): entries whose lease expired first, then due entries tenant
 * by tenant in turn (docs/inbox.md, "Fair claiming"), every row taken with `FOR UPDATE SKIP LOCKED`
 * so that workers in any number of processes take different rows.
 *
 * The tenants with due entries are found by walking the partial index
 * `(tenant, next_attempt_at, seq) WHERE status = 'pending'` with a recursive query, two index
 * probes per tenant (the next tenant after this one; has it a due entry), from the tenant this
 * worker served last, round once: the cost of a claim grows with the tenants it visits, never with
 * how many entries one of them has waiting. Then, in one statement, up to `limit` runnable entries
 * of each of those tenants (earliest first) are locked, and one of each is taken in turn, then a
 * second of each, until `limit`.
 */
import type { ClaimRequest, InboxRow } from '../store.ts';

/** The most tenants one claim looks at; the next claim goes on from where it stopped. */
export const MAX_TENANTS_VISITED = 1000;

type Query = <R>(sql: string, params?: unknown[]) => Promise<R[]>;

/** The runnable rule of InboxStore.claim for entry `e` ($1 now, $2 orderWaitMs): its order's earliest unfinished entry, none leased, its order.created there (or waited for long enough). */
const runnable = (table: string) => `(e.order_id IS NULL OR (
    NOT EXISTS (SELECT 1 FROM ${table} p WHERE p.order_id = e.order_id AND p.tenant = e.tenant AND p.seq <> e.seq
      AND ((p.status IN ('pending', 'processing') AND ((p.event = 'order.created' AND e.event <> 'order.created')
        OR ((p.event = 'order.created') = (e.event = 'order.created') AND (p.ts < e.ts OR (p.ts = e.ts AND (p.received_at < e.received_at OR (p.received_at = e.received_at AND p.seq < e.seq)))))))
        OR (p.status = 'processing' AND p.lease_until > $1)))
    AND (e.event <> 'order.status_changed' OR e.received_at + $2 <= $1
      OR EXISTS (SELECT 1 FROM ${table} c WHERE c.order_id = e.order_id AND c.tenant = e.tenant AND c.event = 'order.created'))))`;

/**
 * Tenants with a due entry, in index order from `$1` (after it, or from it with `inclusive`) up to
 * `$2` (inclusive; no bound when null), at most `$4` of them among `$5` visited, due at `$3`. Each
 * step is an index probe: `min(tenant)` over a range of the partial index, never a scan of a tenant's rows.
 */
const walk = (table: string, inclusive: boolean) => `
  WITH RECURSIVE walk(tenant, step) AS (
    SELECT (SELECT min(tenant) FROM ${table} WHERE status = 'pending' AND tenant ${inclusive ? '>=' : '>'} $1::text), 1
    UNION ALL
    SELECT (SELECT min(tenant) FROM ${table} WHERE status = 'pending' AND tenant > walk.tenant), walk.step + 1
    FROM walk WHERE walk.tenant IS NOT NULL AND walk.step < $5 AND ($2::text IS NULL OR walk.tenant < $2)
  )
  SELECT tenant FROM walk
  WHERE tenant IS NOT NULL AND ($2::text IS NULL OR tenant <= $2)
    AND EXISTS (SELECT 1 FROM ${table} d WHERE d.status = 'pending' AND d.tenant = walk.tenant AND d.next_attempt_at <= $3)
  LIMIT $4`;

/** The tenants whose due entries a claim of `wanted` looks at: after `after`, then from the first round to it. */
export async function dueTenants(query: Query, table: string, after: string | null, now: number, wanted: number): Promise<string[]> {
  const tenantsOf = async (from: string, inclusive: boolean, upTo: string | null, count: number) =>
    (await query<{ tenant: string }>(walk(table, inclusive), [from, upTo, now, count, MAX_TENANTS_VISITED])).map((row) => row.tenant);
  if (after === null) return tenantsOf('', true, null, wanted);
  const first = await tenantsOf(after, false, null, wanted);
  if (first.length >= wanted) return first;
  // Round once: from the first tenant to the one served last, which comes last.
  return [...first, ...(await tenantsOf('', true, after, wanted - first.length))];
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
