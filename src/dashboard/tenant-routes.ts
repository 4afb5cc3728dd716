// The routes of a dashboard given `tenants`: the check that a tenant's pages (`<base>/t/<tenant>/…`,
// taken off the path before the routes, see tenant-scope.ts) are of a tenant the registry holds,
// the Tenants page, and the header's tenant filter.
import type { Context, Hono } from 'hono';
import { tenantIdProblem } from '../tenants/tenant-id.ts';
import type { Tenants } from '../tenants/types.ts';
import type { DashboardEnv } from './action-routes.ts';
import type { DashboardStore } from './data.ts';
import { messagePage, type PageFrame } from './pages.ts';
import { scopeProblem, tenantBase } from './tenant-scope.ts';
import { createTenantsReader } from './tenants-data.ts';
import { tenantsPage } from './tenants-page.ts';

type Page = ReturnType<typeof messagePage>;

export interface TenantRoutesContext {
  base: string;
  tenants: Tenants | undefined;
  source: DashboardStore;
  frameOf(c: Context<DashboardEnv>): PageFrame;
  page(c: Context<DashboardEnv>, body: Page, status?: 200 | 400 | 404): Promise<Response>;
}

/** The scope check (a middleware: register it before the pages) and the tenant routes. */
export function registerTenantRoutes(routes: Hono<DashboardEnv>, context: TenantRoutesContext): void {
  const { base, tenants, source, frameOf, page } = context;
  const reader = tenants ? createTenantsReader(tenants, source) : undefined;

  routes.use('*', async (c, next) => {
    const tenant = (c.env as { tenant?: unknown } | undefined)?.tenant;
    if (typeof tenant !== 'string') return next();
    const problem = await scopeProblem(tenants, tenant);
    if (problem !== undefined) return page(c, messagePage({ base }, 'No such tenant', problem), 404);
    c.set('tenant', tenant);
    await next();
  });

  routes.get('/tenants', async (c) => {
    if (!reader || c.get('tenant') !== undefined) return page(c, messagePage(frameOf(c), 'No tenants page', 'This dashboard was created without tenants.'), 404);
    const after = c.req.query('after') || undefined;
    if (after !== undefined && tenantIdProblem(after) !== null) return page(c, messagePage(frameOf(c), 'Bad page', 'after must be a tenant id.'), 400);
    return page(c, tenantsPage(frameOf(c), await reader.read(after), after));
  });

  // The header's tenant filter: a tenant's pages, or (empty) every tenant's.
  routes.get('/tenant', (c) => {
    const tenant = c.req.query('tenant')?.trim() ?? '';
    return c.redirect(tenant === '' ? `${base}/` : `${tenantBase(base, tenant)}/`, 303);
  });
}
