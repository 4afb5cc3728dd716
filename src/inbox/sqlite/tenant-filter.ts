// One tenant's rows of the entries table, as the SQLite store's queries select them.

/**
 * A tenant condition on the entries table, and its named parameter (node:sqlite takes the named
 * parameters first, then the positional ones): the tenants' own index serves a tenant's rows, which
 * the condition `tenant <> ''` tells the planner.
 */
export function tenantWhere(tenant: string | undefined): { sql: string; named: Record<string, string> } {
  if (tenant === undefined) return { sql: '1 = 1', named: {} };
  if (tenant === '') return { sql: `tenant = ''`, named: {} };
  return { sql: `tenant = :tenant AND tenant <> ''`, named: { tenant } };
}
