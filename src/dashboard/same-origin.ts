// Whether a POST comes from the dashboard's own pages. Both signs must agree, where hono's csrf
// middleware lets either one pass: `Sec-Fetch-Site`, when the browser sends it, must be
// `same-origin` or `none` (`same-site` is a sibling subdomain's page, `cross-site` anyone's),
// whatever `Origin` says; and an `Origin` must be the dashboard's own host. A browser sends
// `Origin: null` for the dashboard's own forms (its pages say `Referrer-Policy: no-referrer`):
// without a real `Origin`, only a browser's `same-origin` passes.

const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

export type OriginVerdict = { ok: true } | { ok: false; why: string };

export function sameOriginVerdict(request: Request): OriginVerdict {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && !ALLOWED_FETCH_SITES.has(site.trim().toLowerCase())) {
    return { ok: false, why: `the browser says it came from another site (Sec-Fetch-Site: ${site.slice(0, 20)})` };
  }
  const origin = request.headers.get('origin');
  if (origin === null || origin === 'null') {
    return site?.trim().toLowerCase() === 'same-origin' ? { ok: true } : { ok: false, why: 'it carries no Origin' };
  }
  const host = request.headers.get('host') ?? new URL(request.url).host;
  let from: string;
  try {
    from = new URL(origin).host;
  } catch {
    return { ok: false, why: 'its Origin is not an address' };
  }
  return from !== '' && from === host ? { ok: true } : { ok: false, why: 'it came from another origin' };
}
