// The tenant filter of a dashboard given `tenants`: every page exists once for all tenants and once
// per tenant under `<basePath>/t/<tenant id>/`, so that every link a page draws (built on the
// frame's base) stays within the tenant it shows, and a bookmark keeps it. The scope is taken off
// the path before the routes see it and handed to them beside the request (never in a header a
// client could send).
import { tenantIdProblem } from '../tenants/tenant-id.ts';
import type { Tenants } from '../tenants/types.ts';

/** The part of the path that scopes a page to a tenant. */
const SCOPE = '/t/';

/** `<base>/t/<tenant>/rest` → the tenant and `<base>/rest`; `undefined` for a path outside any tenant. */
export function scopeOf(base: string, pathname: string): { tenant: string; path: string } | undefined {
  const prefix = `${base}${SCOPE}`;
  if (!pathname.startsWith(prefix)) return undefined;
  const rest = pathname.slice(prefix.length);
  const slash = rest.indexOf('/');
  let tenant: string;
  try {
    tenant = decodeURIComponent(slash === -1 ? rest : rest.slice(0, slash));
  } catch {
    return undefined;
  }
  if (tenant === '') return undefined;
  return { tenant, path: `${base}${slash === -1 ? '/' : rest.slice(slash)}` };
}

/** The base of a tenant's pages. */
export function tenantBase(base: string, tenant: string): string {
  return `${base}${SCOPE}${encodeURIComponent(tenant)}`;
}

/** A request for the same thing at another path (the body streamed on as it is). */
export function withPath(request: Request, url: URL): Request {
  const init: RequestInit & { duplex?: 'half' } = { method: request.method, headers: request.headers, signal: request.signal };
  if (request.body !== null) Object.assign(init, { body: request.body, duplex: 'half' });
  return new Request(url, init);
}

/**
 * Why a scoped page cannot be shown (a message for a 404), or `undefined` when the tenant is one
 * the registry holds. Disconnected tenants are shown: their entries stay in the inbox.
 */
export async function scopeProblem(tenants: Tenants | undefined, tenant: string): Promise<string | undefined> {
  if (!tenants) return 'This dashboard was created without tenants: its pages cover the one inbox.';
  if (tenantIdProblem(tenant) !== null || (await tenants.get(tenant)) === null) return `The tenants registry holds no tenant ${JSON.stringify(tenant)}.`;
  return undefined;
}
