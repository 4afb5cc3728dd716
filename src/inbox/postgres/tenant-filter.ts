// One tenant's rows of the entries table, as the Postgres store's queries select them.

/**
 * A tenant condition as parameter `$n` (with {@link tenantParam}): the tenants' own index serves a
 * tenant's rows, which the condition `tenant <> ''` tells the planner.
 */
export function tenantWhere(tenant: string | undefined, n: number): string {
  if (tenant === undefined) return 'TRUE';
  if (tenant === '') return `tenant = ''`;
  return `tenant = $${n}::text AND tenant <> ''`;
}
export const tenantParam = (tenant: string | undefined): string[] => (tenant === undefined || tenant === '' ? [] : [tenant]);
