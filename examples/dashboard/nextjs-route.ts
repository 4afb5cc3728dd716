// The operator's dashboard as a Next.js App Router catch-all route: app/integration/[[...path]]/route.ts.
// Route handlers get the Fetch Request with its full path, which is what the dashboard expects.
// Run it on the Node.js runtime (the inbox stores need Node) and never cache it.
//
// Next.js accepts only route exports (GET, POST, runtime, dynamic) from a route.ts: in an app, move
// createDashboardRoutes to a module of its own (lib/dashboard.ts) and keep only the exports below.
import { createDashboard, type DashboardOptions } from 'integration-sdk/dashboard';

export function createDashboardRoutes(options: Omit<DashboardOptions, 'basePath'>): { GET: (request: Request) => Promise<Response>; POST: (request: Request) => Promise<Response> } {
  const dashboard = createDashboard({ ...options, basePath: '/integration' });
  return { GET: (request) => dashboard.fetch(request), POST: (request) => dashboard.fetch(request) };
}

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

let routes: ReturnType<typeof createDashboardRoutes> | undefined;
async function load(): Promise<ReturnType<typeof createDashboardRoutes>> {
  // Made on the first request rather than at import, so that `next build` runs without the token.
  if (!routes) {
    const { createInbox } = await import('integration-sdk/inbox');
    const { sqliteStore } = await import('integration-sdk/inbox/sqlite');
    const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET ?? 'whsec_unused_here', store: sqliteStore({ path: process.env.INBOX_PATH ?? './integration-inbox.db' }) });
    routes = createDashboardRoutes({ inbox, auth: { token: process.env.DASHBOARD_TOKEN! } });
  }
  return routes;
}

export async function GET(request: Request): Promise<Response> {
  return (await load()).GET(request);
}
export async function POST(request: Request): Promise<Response> {
  return (await load()).POST(request);
}
